import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';
import { deliveryIdAt } from './deliveryIds.js';

export interface StoredEvent {
  id: string;
  account_id: string;
  event_type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

/** A look back further than any event this service keeps (about 32 years): the whole outbox. */
const THE_WHOLE_OUTBOX_MS = 1e12;

/**
 * The fan-out rule, as CTEs to follow one that names the events being dispatched (`picked`:
 * id, account_id, event_type, created_at, hook_id): one `queued` delivery for each subscription an
 * event goes to (its account's and type's, live, of a live key, existing when it fired, and only
 * the one a test event names (src/storage/testEvents.ts); a disabled one
 * counts the event as skipped instead), each the dispatcher's to send until `leaseMs` (the SQL
 * parameter named) from now; past that, the relay hands it to a worker
 * (src/workers/outboxRelay.ts). Fan-out from the outbox and the web's own statements that fire
 * events (calls, new contacts) share it, so an event goes to the same subscriptions whichever
 * dispatched it.
 */
export const fanOutOf = (picked: string, leaseMs: string) => `
  -- Each event's own hooks, looked up by hooks_by_event. OFFSET 0 keeps the subquery apart,
  -- so however the planner sizes the tables, it cannot become a hash join over every hook.
  targets AS (
    SELECT p.id AS event_id, p.created_at, p.account_id, h.id AS hook_id, h.state FROM ${picked} p
    CROSS JOIN LATERAL (
      SELECT h.id, h.state FROM hooks h JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
      WHERE h.account_id = p.account_id AND h.event_type = p.event_type
        AND h.deleted_at IS NULL AND h.created_at <= p.created_at
        AND (p.hook_id IS NULL OR h.id = p.hook_id)
      OFFSET 0) h),
  queued AS (
    -- queued_at is the event's time: its day partition, and the time in the delivery's id.
    INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
    SELECT ${deliveryIdAt('created_at')}, event_id, hook_id, account_id, 'queued', created_at,
      clock_timestamp() + make_interval(secs => ${leaseMs} / 1000.0)
    FROM targets WHERE state = 'active'
    ON CONFLICT (event_id, hook_id, queued_at) DO NOTHING
    RETURNING id, event_id, hook_id, queued_at),
  -- A disabled hook gets no delivery: its events are counted on it instead. Locked in one
  -- order, so concurrent fan-outs wait for each other rather than deadlock.
  skipping AS (
    SELECT hook_id, count(*) AS events FROM targets WHERE state = 'disabled' GROUP BY hook_id),
  locked AS (SELECT id FROM hooks WHERE id IN (SELECT hook_id FROM skipping) ORDER BY id FOR NO KEY UPDATE),
  skipped AS (
    UPDATE hooks h SET skipped = h.skipped + s.events FROM skipping s, locked l WHERE h.id = s.hook_id AND l.id = s.hook_id)`;

/** A fan-out's answer: one row per delivery, and one (without a delivery) per event that has none, in the events' order. */
export const fannedOutRows = (picked: string) => `
  SELECT p.id AS event_id, q.id AS delivery_id, p.account_id, h.target_url, h.max_per_second, q.queued_at
  FROM ${picked} p LEFT JOIN queued q ON q.event_id = p.id LEFT JOIN hooks h ON h.id = q.hook_id
  ORDER BY p.created_at, p.id, h.created_at`;

export type FannedOutRow = (QueuedDelivery | { delivery_id: null }) & { event_id: string };

/** The deliveries of a fan-out's answer. */
export const queuedDeliveriesOf = (rows: FannedOutRow[]) =>
  rows.filter((row): row is QueuedDelivery & { event_id: string } => row.delivery_id !== null);

export function eventQueries(db: Sql) {
  return {
    /** Recent events of an account, newest first, test events left out: sample data for automation platforms. */
    async listRecent(accountId: string, type: EventType, limit: number) {
      const { rows } = await db.query<StoredEvent>(
        `SELECT id, event_type, data, created_at FROM events
         WHERE account_id = $1 AND event_type = $2 AND hook_id IS NULL ORDER BY created_at DESC LIMIT $3`,
        [accountId, type, limit],
      );
      return rows;
    },

    /**
     * Fans out the oldest events not yet fanned out (an older web process's, which left them in
     * the outbox), up to `limit` of them, each once: marks them dispatched and applies the fan-out
     * rule (`fanOutOf`, each delivery the caller's for `leaseMs`) in one statement, so atomically
     * and with one commit for the whole batch. Events another process is fanning out are skipped.
     * Returns how many events it took, and their deliveries in the events' order.
     *
     * `lookBackMs` takes only events fired that recently (in the database's clock). The index of
     * events not yet fanned out keeps an entry for every one fanned out since the last vacuum,
     * oldest first, and a look at the whole outbox steps over all of them: a look back starts
     * past them.
     */
    async fanOut(limit: number, leaseMs: number, lookBackMs = THE_WHOLE_OUTBOX_MS): Promise<{ events: number; deliveries: QueuedDelivery[] }> {
      const { rows } = await db.query<FannedOutRow>(
        `WITH picked AS (
           SELECT id, account_id, event_type, created_at, hook_id FROM events
           WHERE dispatched_at IS NULL AND created_at >= now() - make_interval(secs => $3 / 1000.0)
           ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED),
         marked AS (UPDATE events e SET dispatched_at = clock_timestamp() FROM picked WHERE e.id = picked.id AND e.created_at = picked.created_at),
         ${fanOutOf('picked', '$2')}
         ${fannedOutRows('picked')}`,
        [limit, leaseMs, lookBackMs],
      );
      return { events: new Set(rows.map((row) => row.event_id)).size, deliveries: queuedDeliveriesOf(rows) };
    },

    /** The outbox: how many events wait to be fanned out, and for how long the oldest has. */
    async outbox() {
      const { rows } = await db.query<{ depth: number; oldest_seconds: number | null }>(
        `SELECT count(*)::int AS depth, extract(epoch FROM clock_timestamp() - min(created_at))::float8 AS oldest_seconds
         FROM events WHERE dispatched_at IS NULL`,
      );
      return { depth: rows[0]!.depth, oldestSeconds: rows[0]!.oldest_seconds ?? 0 };
    },
  };
}

/** A queued delivery, with what pacing it needs. */
export interface QueuedDelivery {
  delivery_id: string;
  account_id: string;
  target_url: string;
  max_per_second: number | null;
  queued_at: Date;
  /** Its place in line at the gate, once it had one and waited (relayed deliveries). */
  place?: number | null;
}
