import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';
import { deliveryIdAt } from './deliveryIds.js';
import type { QueuedDelivery } from './events.js';

/**
 * Test events, sent by an owner from the portal: each is an event whose `hook_id` names the one
 * subscription it is for, recorded already dispatched with its one queued delivery, so that no
 * fan-out takes it to any other subscription, and the events sample list leaves it out.
 */
export function testEventQueries(db: Sql) {
  return {
    /**
     * Records a test event of `type` with `data` (JSON text) for the account's live hook of a live
     * key, and its queued delivery, the caller's to hand to a worker within `leaseMs` (after which
     * the relay takes it), in one statement. Undefined when there is no such hook.
     */
    async send(accountId: string, hookId: string, type: EventType, data: string, leaseMs: number) {
      const { rows } = await db.query<QueuedDelivery & { event_id: string }>(
        `WITH hook AS (
           SELECT h.id, h.account_id, h.target_url, h.max_per_second FROM hooks h JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
           WHERE h.id = $1 AND h.account_id = $2 AND h.event_type = $3 AND h.deleted_at IS NULL),
         fired AS (
           INSERT INTO events (id, account_id, event_type, data, dispatched_at, hook_id)
           SELECT gen_random_uuid(), account_id, $3, $4::json, clock_timestamp(), id FROM hook
           RETURNING id, hook_id, created_at),
         queued AS (
           INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
           SELECT ${deliveryIdAt('created_at')}, id, hook_id, $2, 'queued', created_at, clock_timestamp() + make_interval(secs => $5 / 1000.0)
           FROM fired
           RETURNING id, event_id, queued_at)
         SELECT q.id AS delivery_id, q.event_id, h.account_id, h.target_url, h.max_per_second, q.queued_at FROM queued q CROSS JOIN hook h`,
        [hookId, accountId, type, data, leaseMs],
      );
      return rows[0];
    },

    /**
     * Which of these events are test events. Each delivery's queued_at is its event's time, so
     * `from` and `to` (the earliest and latest of them, to the millisecond) keep the look-up to
     * their days; `to` is widened by a millisecond for the microseconds PostgreSQL keeps.
     */
    async among(eventIds: string[], from: Date, to: Date): Promise<Set<string>> {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM events WHERE id = ANY($1::uuid[]) AND created_at >= $2 AND created_at < $3 AND hook_id IS NOT NULL`,
        [eventIds, from, new Date(to.getTime() + 1)],
      );
      return new Set(rows.map((row) => row.id));
    },
  };
}
