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
     * Marks an event as taken off the queue and returns it with the hooks it goes to: those of
     * its account and type that existed when it fired and are not deleted.
     */
    async takeForDelivery(eventId: string) {
      // One round trip: this runs once per event on the delivery hot path.
      const { rows } = await db.query<StoredEvent & { hook_id: string | null; target_url: string; secret: string }>(
        `WITH taken AS (
           UPDATE events SET dispatched_at = coalesce(dispatched_at, clock_timestamp()) WHERE id = $1
           RETURNING id, account_id, event_type, data, created_at)
         SELECT taken.*, h.id AS hook_id, h.target_url, h.secret FROM taken
         LEFT JOIN hooks h ON h.account_id = taken.account_id AND h.event_type = taken.event_type
           AND h.deleted_at IS NULL AND h.created_at <= taken.created_at
         ORDER BY h.created_at`,
        [eventId],
      );
      const [first] = rows;
      if (!first) return undefined;
      const { id, account_id, event_type, data, created_at } = first;
      const hooks = rows.flatMap((row) => (row.hook_id ? [{ id: row.hook_id, target_url: row.target_url, secret: row.secret }] : []));
      return { event: { id, account_id, event_type, data, created_at }, hooks };
    },

    /** Events written but never taken off a queue (Redis was away, or the process died). */
    async listUndispatched(olderThanMs: number, limit: number) {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM events WHERE dispatched_at IS NULL AND created_at < clock_timestamp() - make_interval(secs => $1)
         ORDER BY created_at LIMIT $2`,
        [olderThanMs / 1000, limit],
      );
      return rows.map((row) => row.id);
    },
  };
}
