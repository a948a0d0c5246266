import { z } from 'zod';
import { CHANNELS, OUTCOMES } from '../domain/calls.js';
import { FEED_MAX_LIMIT, FEED_PAGE_LIMIT, FEED_SAMPLE_LIMIT } from '../domain/eventFeed.js';
import { EVENT_TYPES } from '../domain/events.js';
import { MAX_PER_SECOND_RANGE } from '../domain/hooks.js';
import { isAccountId } from '../domain/ids.js';
import { PORTAL_CAPABILITIES, PORTAL_EXPIRY_SECONDS } from '../domain/portal.js';
import { DELIVERY_STATUSES } from '../domain/delivery.js';
import { DELIVERY_LOG_DEFAULT_LIMIT, DELIVERY_LOG_MAX_LIMIT } from '../domain/deliveryLog.js';
import { DISABLED_REASONS, HOOK_STATES, OUTCOME_STATUSES } from '../domain/hookHealth.js';

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
  phone: z.string(code('missing_phone')).nullable().meta({ description: 'E.164 preferred; read in DEFAULT_COUNTRY without a leading +' }),
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

const time = z.iso.datetime().nullable();
export const hookWithHealth = hook.extend({
  state: z.enum(HOOK_STATES).meta({ description: 'disabled: its events create no deliveries (auto-disable) until it is enabled' }),
  disabled_reason: z
    .enum(DISABLED_REASONS)
    .nullable()
    .meta({ description: 'failing: every delivery failed for HOOK_DISABLE_AFTER, at least HOOK_DISABLE_MIN_FAILURES times; null while active' }),
  disabled_at: time.meta({ description: 'null while active' }),
  health: z.object({
    last_delivered_at: time.meta({ description: 'when the latest delivered POST was sent' }),
    last_failed_at: time.meta({ description: 'when the latest failed POST was sent (non-2xx, refused, timeout, unknown)' }),
    consecutive_failures: z.number().int().meta({ description: 'failures since the latest success or enable' }),
    skipped: z.number().int().meta({ description: 'events not delivered because it was disabled, since its latest disable' }),
    last_24h: z
      .object(Object.fromEntries(OUTCOME_STATUSES.map((status) => [status, z.number().int()])) as Record<(typeof OUTCOME_STATUSES)[number], z.ZodNumber>)
      .meta({ description: 'outcomes recorded in the current hour and the 23 before, by status' }),
  }),
});

export const hookList = z.object({ hooks: z.array(hookWithHealth) });
/** The owner's view (first-party) also says which key made each subscription. */
export const ownersHook = hookWithHealth.extend({ key_id: z.uuid().meta({ description: 'The API key that made it' }) });
export const ownersHookList = z.object({ hooks: z.array(ownersHook) });

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
  after: z
    .string()
    .optional()
    .meta({
      description: 'A `next_cursor` this feed answered: the events after it, oldest first. Without it, the newest events, newest first.',
      examples: ['NDg4MjF8MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwfDE3OTU0MzUyMDAwMDA'],
    }),
  limit: z
    .string()
    .optional()
    .meta({ description: `How many, 1 to ${FEED_MAX_LIMIT}; default ${FEED_SAMPLE_LIMIT} without \`after\`, ${FEED_PAGE_LIMIT} with it`, examples: ['3'] }),
});

export const eventList = z.object({
  events: z.array(z.object({ id: z.uuid(), event: eventType, data: z.record(z.string(), z.unknown()), created_at: z.iso.datetime() })),
  next_cursor: z.string().meta({ description: 'Where to read on from: pass it as `after`. Opaque.' }),
});

export const deliveryLogQuery = z.object({
  status: z
    .string()
    .optional()
    .meta({ description: 'One status or several, comma-separated', examples: ['failed,unknown'] }),
  since: z
    .string()
    .optional()
    .meta({ description: 'Queued at or after (ISO 8601)', examples: ['2026-11-23T00:00:00Z'] }),
  until: z
    .string()
    .optional()
    .meta({ description: 'Queued before (ISO 8601)', examples: ['2026-11-24T00:00:00Z'] }),
  event_id: z
    .string()
    .optional()
    .meta({ description: 'The deliveries of one event', examples: ['0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b'] }),
  limit: z
    .string()
    .optional()
    .meta({ description: `Rows per page, 1 to ${DELIVERY_LOG_MAX_LIMIT}; default ${DELIVERY_LOG_DEFAULT_LIMIT}`, examples: ['50'] }),
  cursor: z
    .string()
    .optional()
    .meta({
      description: 'The next_cursor of the previous page',
      examples: ['MjAyNi0xMS0yM1QxMjowMDowMC4xMjAzNDFafDNjMmIxYTA5LThmN2UtNGQ2Yy05YjVhLTRlM2QyYzFiMGE5OA'],
    }),
});
export const accountDeliveryLogQuery = deliveryLogQuery.extend({
  hook_id: z
    .string()
    .optional()
    .meta({ description: 'The deliveries of one subscription', examples: ['9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d'] }),
});

export const deliveryList = z.object({
  next_cursor: z
    .string()
    .nullable()
    .meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page. Stable while new deliveries arrive.' }),
  deliveries: z.array(
    z.object({
      id: z.uuid(),
      hook_id: z.uuid(),
      event_id: z.uuid(),
      event: eventType,
      status: z.enum(DELIVERY_STATUSES),
      response_status: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number().int().nullable(),
      queued_at: z.iso.datetime(),
      attempted_at: z.iso.datetime().nullable().meta({ description: 'when the POST was claimed and sent; null while queued or when expired' }),
      test: z.boolean().meta({ description: 'a test event its owner sent to this subscription alone (from the portal), with the catalog’s example data' }),
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
  last_used_at: z.iso.datetime().nullable().meta({ description: 'when a request with it last succeeded, to the minute; null if never' }),
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

// Fastify validates a missing body as null: no body means every default.
const expiresIn = { error: 'invalid_expires_in' };
export const portalSessionInput = z
  .object({
    capabilities: z
      .array(z.enum(PORTAL_CAPABILITIES, { error: 'invalid_capabilities' }), { error: 'invalid_capabilities' })
      .min(1, { error: 'invalid_capabilities' })
      .optional()
      .meta({ description: 'What the owner may do: read, or read and manage (manage implies read). Default: read' }),
    expires_in: z
      .number(expiresIn)
      .int(expiresIn)
      .min(PORTAL_EXPIRY_SECONDS.min, expiresIn)
      .max(PORTAL_EXPIRY_SECONDS.max, expiresIn)
      .optional()
      .meta({ description: `Seconds the link, and the session it opens, live; default ${PORTAL_EXPIRY_SECONDS.default} (an hour), at most 7 days` }),
  })
  .nullish()
  .transform((body) => body ?? {});
export const portalSession = z.object({
  url: z.url().meta({ description: 'The single-use link: opening it signs the owner in to the portal and redirects to /portal' }),
  expires_at: z.iso.datetime().meta({ description: 'When the link, and the session it opens, end' }),
});
