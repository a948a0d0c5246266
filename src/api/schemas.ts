import { z } from 'zod';
import { CHANNELS, OUTCOMES } from '../domain/calls.js';
import { EVENT_TYPES } from '../domain/events.js';
import { MAX_PER_SECOND_RANGE } from '../domain/hooks.js';
import { isAccountId } from '../domain/ids.js';
import { DELIVERY_STATUSES } from '../domain/delivery.js';

/**
 * Request and response schemas: validation, TypeScript types and the OpenAPI document come
 * from these. A zod error message that is an error code is answered as that code; any other
 * shape problem is `invalid_request` (see errors.ts).
 */
const code = (missing: string, wrongType = 'invalid_request') => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? missing : wrongType),
});

// Automation platforms send null for empty fields: null is read as absent.
export const contactInput = z.object({
  phone: z
    .string(code('missing_phone'))
    .nullable()
    .meta({ description: 'E.164 preferred; read in DEFAULT_COUNTRY without a leading +' }),
  name: z.string().nullish(),
  email: z.string().nullish(),
});

export const upsertResult = z.object({
  action: z.enum(['inserted', 'updated', 'skipped']),
  contact_id: z.uuid().nullable().meta({ description: 'null only when the phone matches no contact and the upsert was skipped' }),
  reason: z.enum(['invalid_phone', 'invalid_name', 'invalid_email', 'owner_edited']).optional(),
});

export const eventType = z.enum(EVENT_TYPES);

export const subscribeInput = z.object({
  event: z.string(code('invalid_event', 'invalid_event')).meta({ enum: [...EVENT_TYPES] }),
  target_url: z.string(code('invalid_target_url', 'invalid_target_url')).meta({ format: 'uri', description: 'absolute https URL' }),
  max_per_second: z
    .number({ error: 'invalid_max_per_second' })
    .int({ error: 'invalid_max_per_second' })
    .min(MAX_PER_SECOND_RANGE.min, { error: 'invalid_max_per_second' })
    .max(MAX_PER_SECOND_RANGE.max, { error: 'invalid_max_per_second' })
    .nullish()
    .meta({ description: 'POSTs per second this subscription accepts at most; absent or null: the service default (20)' }),
});

export const hook = z.object({
  id: z.uuid(),
  event_type: eventType,
  target_url: z.string(),
  max_per_second: z.number().int().nullable().meta({ description: 'null: the service default pace' }),
  created_at: z.iso.datetime(),
});

export const createdHook = hook.extend({
  secret: z.string().meta({ description: 'Standard Webhooks signing secret (whsec_...); shown only here' }),
});

export const hookList = z.object({ hooks: z.array(hook) });

export const identity = z.object({
  account_id: z.string(),
  key: z.object({ id: z.uuid(), source: z.string(), name: z.string().nullable(), created_at: z.iso.datetime() }),
});
export const ok = z.object({ ok: z.literal(true) });
export const idParam = z.object({
  id: z.string().meta({ description: 'The subscription id that subscribe returned', examples: ['9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d'] }),
});

export const eventsQuery = z.object({
  event: z.string(code('invalid_event', 'invalid_event')).meta({ enum: [...EVENT_TYPES], examples: ['new_contact'] }),
  limit: z.coerce.number().int().min(1).max(100).default(3).meta({ description: 'How many, newest first', examples: [3] }),
});

export const eventList = z.object({
  events: z.array(z.object({ id: z.uuid(), event: eventType, data: z.record(z.string(), z.unknown()), created_at: z.iso.datetime() })),
});

export const deliveryList = z.object({
  deliveries: z.array(
    z.object({
      event_id: z.uuid(),
      event: eventType,
      status: z.enum(DELIVERY_STATUSES),
      response_status: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number().int().nullable(),
      queued_at: z.iso.datetime(),
      attempted_at: z.iso.datetime().nullable().meta({ description: 'when the POST was claimed and sent; null while queued or when expired' }),
    }),
  ),
});

// First-party (/internal/v1) schemas.
// The account id rule lives in the domain (isAccountId): present, at most 128 characters, no control characters.
export const accountParam = z.object({ account_id: z.string().refine(isAccountId) });
// Fastify validates a missing body as null, so a default alone would never apply: no body means {}.
export const keyInput = z
  .object({ source: z.string().optional(), name: z.string().optional() })
  .nullish()
  .transform((body) => body ?? {});
export const apiKey = z.object({
  id: z.uuid(),
  account_id: z.string(),
  source: z.string(),
  name: z.string().nullable(),
  created_at: z.iso.datetime(),
  revoked_at: z.iso.datetime().nullable(),
});
export const createdKey = z.object({ id: z.uuid(), key: z.string(), account_id: z.string(), source: z.string(), created_at: z.iso.datetime() });
export const rotatedKey = createdKey.extend({ name: z.string().nullable() });

export const contact = z.object({
  contact_id: z.uuid(),
  phone: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  source: z.string(),
  owner_fields: z.array(z.string()),
});
export const ownerEditInput = z.object({ name: z.string().nullable().optional(), email: z.string().nullable().optional() });
export const syncInput = contactInput.extend({ source: z.string(code('invalid_source', 'invalid_source')) });

export const callInput = z.object({
  conversation_id: z.uuid().optional(),
  channel: z.enum(CHANNELS),
  outcome: z.enum(OUTCOMES),
  spam: z.boolean(),
  caller_name: z.string().max(256),
  caller_number: z.string().max(64),
  summary: z.string().max(16_384),
});
export const callResult = z.object({ conversation_id: z.uuid(), events: z.array(eventType) });
