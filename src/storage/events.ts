import type { Delivery, DeliveryStatus } from '../domain/delivery.js';
import type { EventType, FiredEvent } from '../domain/events.js';
import type { Sql } from './database.js';
import { deliveryIdAt } from './deliveryIds.js';

export interface StoredEvent {
  id: string;
  account_id: string;
  event_type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

/** An event in the feed, with its transaction's id (xid8, as decimal text). */
export type FeedEvent = Omit<StoredEvent, 'account_id'> & { tx: string };

/** An event's creation time as its job carries it: ISO 8601 to the microsecond, in UTC. */
export const FIRED_AT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Records events in the statement of their cause: each event row, and, when its account has a
 * subscription of its type (or the one a test event names), its outbox row, which the fan-out
 * takes and the relay reads when no worker fanned the event out in time. An event nobody
 * subscribed to is only in the feed: no outbox row, no job. The outbox row keeps the statement's
 * snapshot, so the fan-out sends the event to exactly the subscriptions this statement saw, the
 * ones committed before it: a subscribe racing the event either saw it decided here or not at all.
 * To follow CTEs that name the events as `pending` (id, account_id, event_type, data, hook_id:
 * the one subscription a test event is for, else NULL); adds the CTE `fired` (id, account_id,
 * event_type, fired_at: FiredEvent's columns, and fans_out: whether it has an outbox row).
 */
export const recordEvents = (pending: string, relayGraceMs: string) => `
  recorded_events AS (
    INSERT INTO events (id, account_id, event_type, data, hook_id)
    SELECT id, account_id, event_type, data, hook_id FROM ${pending}
    RETURNING id, account_id, event_type, created_at, hook_id),
  outboxed AS (
    INSERT INTO event_outbox (event_id, account_id, event_type, created_at, relay_at, hook_id, snapshot)
    SELECT r.id, r.account_id, r.event_type, r.created_at, r.created_at + make_interval(secs => ${relayGraceMs} / 1000.0), r.hook_id, pg_current_snapshot()
    FROM recorded_events r
    WHERE EXISTS (
      SELECT 1 FROM hooks h JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
      WHERE h.account_id = r.account_id AND h.event_type = r.event_type AND h.deleted_at IS NULL AND (r.hook_id IS NULL OR h.id = r.hook_id))
    RETURNING event_id),
  fired AS (
    SELECT r.id, r.account_id, r.event_type, ${FIRED_AT('r.created_at')} AS fired_at, o.event_id IS NOT NULL AS fans_out
    FROM recorded_events r LEFT JOIN outboxed o ON o.event_id = r.id)`;

/** The `fired` CTE's rows as their jobs carry them. */
export const firedEventOf = (row: { id: string; account_id: string; event_type: EventType; fired_at: string }): FiredEvent => ({
  event_id: row.id,
  event: row.event_type,
  account_id: row.account_id,
  fired_at: row.fired_at,
});

/** A delivery of a fan-out, with its status: `queued`, or what an earlier run of the event's job made of it. */
export type FannedOutDelivery = Delivery & { status: DeliveryStatus };

export interface FannedOutRow {
  id: string;
  event_id: string;
  hook_id: string;
  status: DeliveryStatus;
  account_id: string;
  target_url: string;
  max_per_second: number | null;
  queued_at: Date;
  /** Its place at the gate, when it waited for one (read by the relay and the `deliveries` queue's jobs). */
  place?: number | null;
}

/** What storage gives the engine: a delivery row, in the engine's shape. */
export const deliveryOf = (row: Omit<FannedOutRow, 'status'>): Delivery => ({
  id: row.id,
  eventId: row.event_id,
  hookId: row.hook_id,
  accountId: row.account_id,
  targetUrl: row.target_url,
  maxPerSecond: row.max_per_second,
  queuedAt: row.queued_at.getTime(),
  ...(row.place != null && { place: row.place }),
});

/**
 * The fan-out: takes the events out of the outbox, and makes one `queued` delivery for each
 * subscription each goes to (its account's and type's, live, of a live key, committed before the
 * statement that recorded the event: visible in its snapshot; an outbox row from before
 * snapshots were kept compares creation times instead; a disabled one counts the event as
 * skipped instead; a test event, sent from the portal, goes to the one it names, even
 * disabled), each the fanning process's to send
 * until `leaseMs` from now; past that, the relay adds it to the `deliveries` queue. All in one
 * statement, so one commit for every event of a batch. An event no longer in the outbox was
 * fanned out before, by an earlier run of its job (stalled, or added twice): its deliveries are
 * returned as they stand, and it is not fanned out again.
 */
const FAN_OUT = `WITH input AS (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]) AS i (id, created_at)),
  picked AS (
    DELETE FROM event_outbox o USING input i WHERE o.event_id = i.id
    RETURNING o.event_id AS id, o.account_id, o.event_type, o.created_at, o.hook_id, o.snapshot),
  -- Each event's own hooks, looked up by hooks_by_event. OFFSET 0 keeps the subquery apart,
  -- so however the planner sizes the tables, it cannot become a hash join over every hook.
  targets AS (
    SELECT p.id AS event_id, p.created_at, p.account_id, h.id AS hook_id,
      CASE WHEN p.hook_id IS NULL THEN h.state ELSE 'active' END AS state, h.target_url, h.max_per_second
    FROM picked p CROSS JOIN LATERAL (
      SELECT h.id, h.state, h.target_url, h.max_per_second FROM hooks h JOIN api_keys k ON k.id = h.api_key_id AND k.revoked_at IS NULL
      WHERE h.account_id = p.account_id AND h.event_type = p.event_type
        AND h.deleted_at IS NULL AND (p.hook_id IS NULL OR h.id = p.hook_id)
        AND CASE WHEN p.snapshot IS NULL THEN h.created_at <= p.created_at
                 ELSE h.created_tx IS NULL OR pg_visible_in_snapshot(h.created_tx, p.snapshot) END
      OFFSET 0) h),
  queued AS (
    -- queued_at is the event's time: its day partition, and the time in the delivery's id.
    INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
    SELECT ${deliveryIdAt('created_at')}, event_id, hook_id, account_id, 'queued', created_at,
      clock_timestamp() + make_interval(secs => $3 / 1000.0)
    FROM targets WHERE state = 'active'
    ON CONFLICT (event_id, hook_id, queued_at) DO NOTHING
    RETURNING id, event_id, hook_id, queued_at),
  -- A disabled hook gets no delivery: its events are counted on it instead. Locked in one
  -- order, so concurrent fan-outs wait for each other rather than deadlock.
  skipping AS (
    SELECT hook_id, count(*) AS events FROM targets WHERE state = 'disabled' GROUP BY hook_id),
  locked AS (SELECT id FROM hooks WHERE id IN (SELECT hook_id FROM skipping) ORDER BY id FOR NO KEY UPDATE),
  skipped AS (
    UPDATE hooks h SET skipped = h.skipped + s.events FROM skipping s, locked l WHERE h.id = s.hook_id AND l.id = s.hook_id)
  SELECT q.id, q.event_id, q.hook_id, 'queued' AS status, t.account_id, t.target_url, t.max_per_second, q.queued_at
  FROM queued q JOIN targets t ON t.event_id = q.event_id AND t.hook_id = q.hook_id
  UNION ALL
  SELECT d.id, d.event_id, d.hook_id, d.status, d.account_id, h.target_url, h.max_per_second, d.queued_at
  FROM input i JOIN deliveries d ON d.event_id = i.id AND d.queued_at = i.created_at JOIN hooks h ON h.id = d.hook_id
  WHERE NOT EXISTS (SELECT 1 FROM picked p WHERE p.id = i.id)`;

export function eventQueries(db: Sql) {
  return {
    /**
     * The events feed (src/domain/eventFeed.ts), test events left out: the account's events of
     * a type after `after`, oldest first, or without it the newest, newest first. Only events
     * below the horizon, so that none can commit later behind them: the lowest transaction id
     * still running in this database (the cluster's other databases do not hold it back), or
     * else the next id to be given. Read first, in a statement of its own: a transaction that
     * ends between its snapshot and the activity read is then visible to the events' statement.
     * Also returns the horizon, the place after them all.
     */
    async feed(accountId: string, type: EventType, after: { tx: string; id: string } | undefined, limit: number) {
      const { rows: horizon } = await db.query<{ tx: string; at: Date }>(
        `SELECT coalesce(
           (SELECT min(x) FROM pg_snapshot_xip(s) x
            WHERE xid(x) IN (SELECT backend_xid FROM pg_stat_activity WHERE datname = current_database())),
           pg_snapshot_xmax(s))::text AS tx, clock_timestamp() AS at
         FROM pg_current_snapshot() s`,
      );
      const order = after ? "COALESCE(tx, '0'::xid8), id" : "COALESCE(tx, '0'::xid8) DESC, id DESC";
      const { rows } = await db.query<FeedEvent>(
        `SELECT id, event_type, data, created_at, COALESCE(tx, '0'::xid8)::text AS tx FROM events
         WHERE account_id = $1 AND event_type = $2 AND hook_id IS NULL AND COALESCE(tx, '0'::xid8) < $3::xid8
           AND ($4::xid8 IS NULL OR (COALESCE(tx, '0'::xid8), id) > ($4::xid8, $5::uuid))
         ORDER BY ${order} LIMIT $6`,
        [accountId, type, horizon[0]!.tx, after?.tx ?? null, after?.id ?? null, limit],
      );
      return { events: rows, horizon: horizon[0]! };
    },

    /** Fans the events out (FAN_OUT); returns their deliveries, each with the event it is of. */
    async fanOut(events: Pick<FiredEvent, 'event_id' | 'fired_at'>[], leaseMs: number): Promise<FannedOutDelivery[]> {
      const { rows } = await db.query<FannedOutRow>(FAN_OUT, [events.map((event) => event.event_id), events.map((event) => event.fired_at), leaseMs]);
      return rows.map((row) => ({ ...deliveryOf(row), status: row.status }));
    },

    /**
     * Takes up to `limit` events of the outbox whose relay time passed (no worker fanned them
     * out: their job was never added, or lost), oldest first, for `leaseMs`: another relay
     * leaves them alone meanwhile. Returns what their jobs carry.
     */
    async takeOverdue(limit: number, leaseMs: number): Promise<FiredEvent[]> {
      const { rows } = await db.query<{ id: string; account_id: string; event_type: EventType; fired_at: string }>(
        `UPDATE event_outbox o SET relay_at = clock_timestamp() + make_interval(secs => $2 / 1000.0)
         WHERE o.event_id IN (
           SELECT event_id FROM event_outbox WHERE relay_at < clock_timestamp() ORDER BY relay_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING o.event_id AS id, o.account_id, o.event_type, ${FIRED_AT('o.created_at')} AS fired_at`,
        [limit, leaseMs],
      );
      return rows.map(firedEventOf);
    },

    /** The outbox: how many events wait to be fanned out, and for how long the oldest has. */
    async outbox() {
      const { rows } = await db.query<{ depth: number; oldest_seconds: number | null }>(
        `SELECT count(*)::int AS depth, extract(epoch FROM clock_timestamp() - min(created_at))::float8 AS oldest_seconds FROM event_outbox`,
      );
      return { depth: rows[0]!.depth, oldestSeconds: rows[0]!.oldest_seconds ?? 0 };
    },
  };
}
