import { z } from 'zod';
import { EVENT_EXAMPLES, type ConversationData, type EventType, type NewContactData } from '../domain/events.js';
import { DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS } from '../domain/throttling.js';

/**
 * The deliveries the service POSTs to subscribers, as OpenAPI 3.1 `webhooks`: the envelope and
 * data of each event (typed against the domain's own shapes, so the two cannot drift apart at
 * compile time), the Standard Webhooks headers, and what each kind of answer does.
 */
const e164 = z
  .string()
  .regex(/^\+[1-9]\d{1,14}$/)
  .meta({ description: 'E.164 phone number' });

export const conversationData = z.object({
  conversation_id: z.uuid().meta({ description: 'The call’s conversation; the same in new_conversation and missed_call of one call' }),
  channel: z.literal('voice').meta({ description: 'Only voice calls fire events' }),
  caller_name: z.string().meta({ description: 'As the call recorded it; may be empty' }),
  caller_number: e164,
  summary: z.string().meta({ description: 'Free-text summary of the call; may be empty' }),
}) satisfies z.ZodType<ConversationData>;

export const newContactData = z.object({
  contact_id: z.uuid(),
  name: z.string().meta({ description: 'Empty when the contact has no name' }),
  phone: e164,
  source: z.string().meta({ description: 'What created the contact: the API key’s source label (e.g. zapier) or the CRM that synced it' }),
}) satisfies z.ZodType<NewContactData>;

const delivery = <T extends EventType>(event: T, data: z.ZodType) => z.object({ event: z.literal(event), data });

export const WEBHOOK_EVENTS = {
  new_conversation: {
    component: 'NewConversationEvent',
    summary: 'A phone call finished',
    fires: 'A voice call finished, answered or sent to voicemail. Spam calls, immediate hang-ups, texts and chats fire nothing.',
    schema: delivery('new_conversation', conversationData),
    example: { event: 'new_conversation', data: EVENT_EXAMPLES.new_conversation },
  },
  missed_call: {
    component: 'MissedCallEvent',
    summary: 'A call went to voicemail',
    fires: 'A voice call went to voicemail. It fires with new_conversation, with the same data: a subscriber to both gets two deliveries.',
    schema: delivery('missed_call', conversationData),
    example: { event: 'missed_call', data: EVENT_EXAMPLES.missed_call },
  },
  new_contact: {
    component: 'NewContactEvent',
    summary: 'A contact was created',
    fires: 'A contact was created, by the contact upsert (action `inserted`) or by a CRM sync. Updates fire nothing.',
    schema: delivery('new_contact', newContactData),
    example: { event: 'new_contact', data: EVENT_EXAMPLES.new_contact },
  },
} satisfies Record<EventType, unknown>;

const HEADERS = [
  {
    name: 'webhook-id',
    description: 'The event’s id, the same for every subscription of that event: use it to drop a message seen before.',
    schema: { type: 'string', format: 'uuid' },
    example: '0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b',
  },
  {
    name: 'webhook-timestamp',
    description: 'When the message was signed, in whole seconds since the Unix epoch. Refuse messages too far from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1795437600',
  },
  {
    name: 'webhook-signature',
    description:
      '`v1,` then the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the ' +
      'subscription’s `secret` after `whsec_`. Several space-separated signatures may come; one valid is enough. Any Standard ' +
      'Webhooks library verifies it, e.g. `new Webhook(secret).verify(body, headers)` from the standardwebhooks npm package.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

const throttled = (what: string) => ({
  description:
    `${what}: the attempt is recorded \`failed\` and is not retried. The service holds further deliveries to that target ` +
    `until its Retry-After, for at most ${MAX_RETRY_AFTER_MS / 60_000} minutes (${DEFAULT_RETRY_AFTER_MS / 1000} s without a ` +
    'usable one); they wait, and are sent then.',
  headers: { 'Retry-After': { description: 'Seconds, or an HTTP date', schema: { type: 'string' } } },
});

const ANSWERS = {
  '2XX': { description: 'Delivered: the attempt is recorded `delivered`. The answer’s body is ignored (at most 4 KiB of it is read).' },
  '410': { description: 'Gone: the subscription is removed at once and gets nothing more; the attempt is recorded `failed`.' },
  '429': throttled('Too many requests'),
  '503': throttled('Unavailable'),
  default: {
    description:
      'Any other status, a redirect (never followed), no answer within DELIVERY_TIMEOUT_MS (10 s by default), or a network ' +
      'error: the attempt is recorded `failed` and is never retried. A subscription whose every delivery fails (429 and 503 ' +
      'included) for HOOK_DISABLE_AFTER (5 days by default), at least HOOK_DISABLE_MIN_FAILURES times (20), is disabled until ' +
      'its owner enables it (see the subscription routes).',
  },
};

const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' });
  return rest;
};

/** The `webhooks` section and the component schemas it refers to. */
export function webhooksDocument() {
  const schemas: Record<string, unknown> = {};
  const webhooks: Record<string, unknown> = {};
  for (const [event, about] of Object.entries(WEBHOOK_EVENTS)) {
    schemas[about.component] = jsonSchema(about.schema);
    webhooks[event] = {
      post: {
        operationId: `deliver_${event}`,
        tags: ['events'],
        summary: about.summary,
        description:
          `${about.fires}\n\nOne signed POST to the target_url of each subscription to \`${event}\` that existed when the event ` +
          'fired, at most once: never retried, whatever the answer. POSTs to one target_url are paced at its subscription’s ' +
          '`max_per_second` (DELIVERY_RATE_PER_TARGET, 20 by default); a delivery that would wait past DELIVERY_MAX_WAIT ' +
          '(24 h by default) is never sent, and is logged `expired`.',
        security: [],
        parameters: HEADERS.map((header) => ({ ...header, in: 'header', required: true })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${about.component}` }, example: about.example } },
        },
        responses: ANSWERS,
      },
    };
  }
  return { schemas, webhooks };
}
