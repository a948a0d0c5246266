import type { EventType, FiredEvent } from '../domain/events.js';
import type { Sql } from './database.js';
import { firedEventOf, recordEvents } from './events.js';

/**
 * Test events, sent by an owner from the portal: each is an event whose `hook_id` names the one
 * subscription it is for, so that its fan-out takes it there alone (events.ts), and the events
 * sample list leaves it out.
 */
export function testEventQueries(db: Sql) {
  return {
    /**
     * Records a test event of `type` with `data` (JSON text) for the account's live hook of a live
     * key, with its outbox row (events.ts, `recordEvents`), in one statement. Returns it as its job
     * carries it; undefined when there is no such hook.
     */
    async send(accountId: string, hookId: string, type: EventType, data: string, relayGraceMs: number): Promise<FiredEvent | undefined> {
      const { rows } = await db.query<{ id: string; account_id: string; event_type: EventType; fired_at: string }>(
        `WITH pending AS (
           SELECT gen_random_uuid() AS id, h.account_id, h.event_type, $4::json AS data, h.id AS hook_id
           FROM hooks h JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
           WHERE h.id = $1 AND h.account_id = $2 AND h.event_type = $3 AND h.deleted_at IS NULL),
         ${recordEvents('pending', '$5')}
         SELECT id, account_id, event_type, fired_at FROM fired`,
        [hookId, accountId, type, data, relayGraceMs],
      );
      return rows[0] && firedEventOf(rows[0]);
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
