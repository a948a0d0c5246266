import type { Services } from '../../services/index.js';
import type { PortalSession } from '../../services/portal.js';
import { hostOf, html, time } from './html.js';
import { page } from './layout.js';

type Delivery = Awaited<ReturnType<Services['portal']['delivery']>>;

/** The body as it was sent, laid out to read: the same keys in the same order. */
const pretty = (body: string) => JSON.stringify(JSON.parse(body), null, 2);

/** One delivery: what was sent where, and what came of it. */
export function deliveryPage(session: PortalSession, delivery: Delivery) {
  const title = `Delivery ${delivery.id.slice(-8)}`;
  return page(
    title,
    html`<p class="crumbs"><a href="/portal">Keys and subscriptions</a> › <a href="/portal/hooks/${delivery.hook_id}">${delivery.event} → ${hostOf(delivery.target_url)}</a></p>
<h1>${title}${delivery.test && html` <span class="badge">test</span>`}</h1>
<dl class="meta">
  <div><dt>Status</dt><dd><span class="status status-${delivery.status}">${delivery.status}</span></dd></div>
  <div><dt>Response status</dt><dd>${delivery.response_status ?? '—'}</dd></div>
  <div><dt>Duration</dt><dd>${delivery.duration_ms === null ? '—' : `${delivery.duration_ms} ms`}</dd></div>
  <div><dt>Error</dt><dd>${delivery.error ?? '—'}</dd></div>
  <div><dt>Queued</dt><dd>${time(delivery.queued_at)}</dd></div>
  <div><dt>Attempted</dt><dd>${time(delivery.attempted_at, 'not yet')}</dd></div>
  <div><dt>Sent to</dt><dd class="wrap">POST ${delivery.target_url}</dd></div>
  <div><dt>Delivery id</dt><dd class="wrap">${delivery.id}</dd></div>
</dl>
<h2>Headers</h2>
<div class="scroll" role="region" aria-label="Headers" tabindex="0">
<table>
  <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
  <tbody>${delivery.headers.map((header) => html`<tr><th scope="row"><code>${header.name}</code></th><td class="wrap"><code>${header.value}</code></td></tr>`)}</tbody>
</table>
</div>
<p class="hint">The signature is computed with the subscription’s secret, which this page never shows.</p>
<h2>Body</h2>
<pre class="code" tabindex="0" aria-label="Body as sent">${pretty(delivery.body)}</pre>`,
    { session },
  );
}
