import { z } from 'zod';
import type { PortalSession } from '../../services/portal.js';
import { WEBHOOK_EVENTS } from '../webhooks.js';
import { html } from './html.js';
import { page } from './layout.js';

interface FieldSchema {
  type?: string;
  const?: string;
  format?: string;
  description?: string;
}

/** An event's data fields, read from the same zod schema the OpenAPI `webhooks` are made of. */
function fieldsOf(schema: z.ZodType) {
  const json = z.toJSONSchema(schema, { io: 'output' }) as unknown as { properties: { data: { properties: Record<string, FieldSchema> } } };
  return Object.entries(json.properties.data.properties).map(([name, field]) => ({
    name,
    type: field.const !== undefined ? `"${field.const}"` : [field.type, field.format].filter(Boolean).join(', '),
    description: field.description ?? '',
  }));
}

/** Text whose `backquoted` parts are code, as the OpenAPI descriptions write them. */
const prose = (text: string) => text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part));

/** The event catalog: each event type, when it fires, its fields, and an example delivery. */
export function catalogPage(session: PortalSession) {
  return page(
    'Event catalog',
    html`<h1>Event catalog</h1>
<p>Each event reaches each of its subscriptions as one signed POST, at most once. The body is <code>{"event": type, "data": fields}</code>.</p>
${Object.entries(WEBHOOK_EVENTS).map(
  ([type, about]) => html`<section aria-labelledby="event-${type}">
  <h2 id="event-${type}"><code>${type}</code>: ${about.summary}</h2>
  <p>${prose(about.fires)}</p>
  <div class="scroll" role="region" aria-label="Fields of ${type}" tabindex="0">
  <table>
    <caption>Fields of <code>data</code></caption>
    <thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">About</th></tr></thead>
    <tbody>${fieldsOf(about.schema).map((field) => html`<tr><th scope="row"><code>${field.name}</code></th><td>${field.type}</td><td>${field.description}</td></tr>`)}</tbody>
  </table>
  </div>
  <h3>Example</h3>
  <pre class="code" tabindex="0" aria-label="Example of ${type}">${JSON.stringify(about.example, null, 2)}</pre>
</section>`,
)}`,
    { session },
  );
}
