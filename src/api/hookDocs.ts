import type { ErrorCode } from './documentedErrors.js';

/** What the hook and delivery log routes document, shared by the public and first-party API. */

export const HOOK_STATE_RULE =
  'Auto-disable: a subscription is disabled (`state: disabled`, `disabled_reason: failing`) when every delivery to it has failed ' +
  '(non-2xx, 429 included, refused, timeout or unknown) for HOOK_DISABLE_AFTER (default 5 days), at least ' +
  'HOOK_DISABLE_MIN_FAILURES times (default 20). A success ends the streak. While disabled its events create no deliveries: ' +
  'they are counted in `health.skipped`. Enabling it sends its events again. A 410 Gone still deletes it at once. ' +
  '`health` is kept as outcomes are recorded; `last_24h` counts outcomes of the current hour and the 23 before.';

export const deliveryLogDescription =
  'Newest first by `queued_at`, then by id. Keyset paging: pass `next_cursor` as `cursor` for the next page; pages stay ' +
  'stable while new deliveries arrive (no row twice, none skipped). `status` takes one status or several, comma-separated; ' +
  '`since` (inclusive) and `until` (exclusive) bound `queued_at`. Kept RETENTION_DAYS (30 by default).';

export const DELIVERY_LOG_ERRORS: ErrorCode[] = ['invalid_status', 'invalid_time', 'invalid_limit', 'invalid_cursor', 'invalid_event_id'];

export const exampleHookWithHealth = {
  id: '9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d',
  event_type: 'new_contact',
  target_url: 'https://hooks.zapier.com/hooks/standard/123456/abcdef/',
  max_per_second: null,
  created_at: '2026-11-23T12:00:00.000Z',
  state: 'disabled',
  disabled_reason: 'failing',
  disabled_at: '2026-11-28T12:00:03.000Z',
  health: {
    last_delivered_at: '2026-11-23T12:00:00.135Z',
    last_failed_at: '2026-11-28T12:00:03.000Z',
    consecutive_failures: 412,
    skipped: 17,
    last_24h: { delivered: 0, failed: 80, refused: 0, expired: 0, unknown: 2 },
  },
};

export const exampleDeliveryPage = {
  deliveries: [
    {
      id: '3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a98',
      hook_id: '9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d',
      event_id: '0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b',
      event: 'new_contact',
      status: 'delivered',
      response_status: 200,
      error: null,
      duration_ms: 84,
      queued_at: '2026-11-23T12:00:00.120Z',
      attempted_at: '2026-11-23T12:00:00.135Z',
      test: false,
    },
  ],
  next_cursor: 'MjAyNi0xMS0yM1QxMjowMDowMC4xMjAzNDFafDNjMmIxYTA5LThmN2UtNGQ2Yy05YjVhLTRlM2QyYzFiMGE5OA',
};
