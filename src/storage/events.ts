import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';

export interface StoredEvent {
  id: string;
  account_id: string;
  event_type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

export function eventQueries(db: Sql) {
  return {
    /** Recent events of an account, newest first: sample data for automation platforms. */
    async listRecent(accountId: string, type: EventType, limit: number) {
      const { rows } = await db.query<StoredEvent>(
        `SELECT id, event_type, data, created_at FROM events
         WHERE account_id = $1 AND event_type = $2 ORDER BY created_at DESC LIMIT $3`,
        [accountId, type, limit],
      );
      return rows;
    },

    /**
     * Fans an event out, once: marks it dispatched and creates one `queued` delivery for each
     * subscription it goes to (its account's and type's, live, of a live key, existing when it
     * fired), in one statement, so atomically. Returns those deliveries; none when the event was
     * dispatched before (its queued deliveries are the relay's to restore) or does not exist.
     */
    async dispatch(eventId: string): Promise<QueuedDelivery[]> {
      const { rows } = await db.query<QueuedDelivery>(
        `WITH event AS (
           UPDATE events SET dispatched_at = clock_timestamp() WHERE id = $1 AND dispatched_at IS NULL
           RETURNING id, account_id, event_type, created_at),
         queued AS (
           INSERT INTO deliveries (id, event_id, hook_id, status)
           SELECT gen_random_uuid(), event.id, h.id, 'queued' FROM event
           JOIN hooks h ON h.account_id = event.account_id AND h.event_type = event.event_type
             AND h.deleted_at IS NULL AND h.created_at <= event.created_at
           JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
           ON CONFLICT (event_id, hook_id) DO NOTHING
           RETURNING id, hook_id, queued_at)
         SELECT queued.id AS delivery_id, h.account_id, h.target_url, h.max_per_second, queued.queued_at
         FROM queued JOIN hooks h ON h.id = queued.hook_id ORDER BY h.created_at`,
        [eventId],
      );
      return rows;
    },

    /**
     * Events committed but not yet fanned out (Redis was away, a job failed, the process died),
     * older than `olderThanMs`, oldest first, from after `cursor`: page through all of them.
     */
    async listUndispatched(olderThanMs: number, cursor: OutboxCursor | undefined, limit: number) {
      const { rows } = await db.query<{ id: string; at: string }>(
        `SELECT id, created_at::text AS at FROM events
         WHERE dispatched_at IS NULL AND created_at < clock_timestamp() - make_interval(secs => $1)
           AND (created_at, id) > ($2::timestamptz, $3::uuid) ORDER BY created_at, id LIMIT $4`,
        [olderThanMs / 1000, cursor?.at ?? '-infinity', cursor?.id ?? NIL_UUID, limit],
      );
      return rows;
    },
  };
}

/**
 * Where a page of an outbox scan ended: the next page starts after this row. `at` is the row's
 * timestamp as PostgreSQL prints it, to the microsecond: a JS Date would cut it to the
 * millisecond, and a page of rows from one millisecond would then be read again forever.
 */
export interface OutboxCursor {
  at: string;
  id: string;
}

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** A queued delivery, with what pacing it needs. */
export interface QueuedDelivery {
  delivery_id: string;
  account_id: string;
  target_url: string;
  max_per_second: number | null;
  queued_at: Date;
}
