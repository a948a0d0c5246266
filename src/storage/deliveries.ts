import type { Delivery, DeliveryStatus } from '../domain/delivery.js';
import type { DeliveryLogFilter } from '../domain/deliveryLog.js';
import type { EventType } from '../domain/events.js';
import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Database } from './database.js';
import { queuedRange } from './deliveryIds.js';
import { deliveryOf, type FannedOutDelivery, type FannedOutRow } from './events.js';
import { COUNT_OUTCOMES, JUST_DISABLED, ruleParams, updateHealth, type DisabledHook } from './hookHealth.js';

/** What a claimed delivery needs to be sent: the event (its data as stored JSON text) and the subscription's secret. */
export interface ClaimedDelivery {
  delivery_id: string;
  event_id: string;
  event_type: EventType;
  /** The event's data exactly as stored: the envelope is built around it, never re-serialised. */
  data: string;
  secret: string;
  target_url: string;
  hook_id: string;
  queued_at: Date;
  attempted_at: Date;
  /** Who claimed it: given back with it when nothing was sent. */
  claim_token: string;
}

export type DeliveryOutcome = {
  status: Exclude<DeliveryStatus, 'queued' | 'sending' | 'expired' | 'unknown'>;
  responseStatus?: number | undefined;
  error?: string | undefined;
  durationMs: number;
};

/**
 * Rows whose partition key `column` is within a range (queuedRange: from the delivery ids a
 * statement is given), so the statement reads only the day partitions of those deliveries (and
 * of their events: the same time).
 */
const inRange = (column: string, from: string, to: string) => `${column} >= ${from}::timestamptz AND ${column} < ${to}::timestamptz`;

/**
 * `locked_deliveries`: the deliveries among `ids` (in the range) that match `condition` once
 * locked, locked in id order before a statement writes them. Every statement that writes a batch
 * of deliveries locks them so, and two batches sharing deliveries then wait for each other rather
 * than deadlock: a plain UPDATE locks rows in whatever order its plan reads them, and two
 * workers' claim and outcome writes can deadlock that way.
 * The rows are found by their key alone and `condition` (on status, claim_token) is checked on
 * what was locked, the rows as they are now, so no other statement can change it before this one
 * commits; the statement then writes them by their key (`d.id = l.id AND d.queued_at =
 * l.queued_at`) without asking for their status again. Asked of the table, the status would let
 * the planner read the partial indexes on it (`deliveries_sending`, `deliveries_overdue`), which
 * keep an entry for every row sent until a vacuum.
 * The locked rows carry their event and hook, so a claim finds each event by its key from the
 * delivery: joined through the table, the planner finds events by time (`created_at` equal to
 * the delivery's), then each delivery among all of that moment's, and PGlite's clock stamps many
 * events with the same millisecond.
 */
const LOCKED_IN_ID_ORDER = (ids: string, from: string, to: string, condition: string) => `locked_rows AS MATERIALIZED (
           SELECT id, queued_at, event_id, hook_id, status, claim_token FROM deliveries d WHERE d.id = ANY(${ids}::uuid[]) AND ${inRange('d.queued_at', from, to)}
           ORDER BY id FOR NO KEY UPDATE),
         locked_deliveries AS (SELECT id, queued_at, event_id, hook_id FROM locked_rows d WHERE ${condition})`;

/**
 * The engine's writes. Each takes a batch, so that the deliveries of many concurrent POSTs share
 * one statement and one commit (src/storage/groupCommit.ts); a batch of one is a batch too. Those
 * that lock in id order run on generic plans (Database.genericPlans): found by key, in the days of
 * their ids, they need no plan of their own per call.
 */
export function deliveryQueries(db: Database) {
  const batchWrites = db.genericPlans();
  return {
    /**
     * Claims queued deliveries just before their POSTs: `queued` becomes `sending` once, whichever
     * worker, repeated job or relayed copy asks, so only one ever sends (at most once). Only while
     * the subscription and its key are live. `token` names the claimant: asking again with the same
     * token (the first answer was lost with the connection) gives its claims back. Returns the
     * deliveries claimed; one missing was claimed before, or its subscription or key is gone.
     */
    async claim(deliveryIds: string[], token: string): Promise<ClaimedDelivery[]> {
      const { rows } = await batchWrites.query<ClaimedDelivery>(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$3', '$4', "(d.status = 'queued' OR (d.status = 'sending' AND d.claim_token = $2))")},
         -- Each delivery's subscription, key and event, looked up by their keys from the delivery
         -- (LATERAL, kept apart by OFFSET 0), and claimable while both are live. Joined as tables,
         -- the planner read the key's subscriptions first and looked every locked delivery up
         -- again for each (50 × 1,000 lookups for a claim of 50 under a key with 1,000
         -- subscriptions); asked inside the lookup, "live" let it read a partial index of live
         -- subscriptions whole for each delivery.
         claimable AS (
           SELECT l.id, l.queued_at, s.* FROM locked_deliveries l CROSS JOIN LATERAL (
             SELECT e.event_type, e.data, h.secret, h.target_url, h.deleted_at, k.revoked_at FROM hooks h, api_keys k, events e
             WHERE h.id = l.hook_id AND k.id = h.api_key_id AND e.id = l.event_id AND ${inRange('e.created_at', '$3', '$4')}
             OFFSET 0) s
           WHERE s.deleted_at IS NULL AND s.revoked_at IS NULL)
         UPDATE deliveries d SET status = 'sending', claim_token = $2,
           attempted_at = CASE WHEN d.status = 'queued' THEN clock_timestamp() ELSE d.attempted_at END
         FROM claimable c
         WHERE d.id = c.id AND d.queued_at = c.queued_at AND ${inRange('d.queued_at', '$3', '$4')}
         RETURNING d.id AS delivery_id, d.event_id, c.event_type, c.data::text AS data, c.secret, c.target_url, d.hook_id,
           d.queued_at, d.attempted_at, d.claim_token`,
        [deliveryIds, token, ...queuedRange(deliveryIds)],
      );
      return rows;
    },

    /**
     * Drops queued deliveries whose subscription or key is gone (unsubscribed, 410, revoked), so
     * the relay stops restoring them. A claimed one is never touched.
     */
    async dropUnclaimable(deliveryIds: string[]): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(
        `DELETE FROM deliveries d WHERE d.id = ANY($1::uuid[]) AND ${inRange('d.queued_at', '$2', '$3')} AND d.status = 'queued' AND NOT EXISTS (
           SELECT 1 FROM hooks h JOIN api_keys k ON k.id = h.api_key_id
           WHERE h.id = d.hook_id AND h.deleted_at IS NULL AND k.revoked_at IS NULL)
         RETURNING d.id`,
        [deliveryIds, ...queuedRange(deliveryIds)],
      );
      return rows.map((row) => row.id);
    },

    /**
     * The deliveries of `ids` as they stand, with what sending them needs: for the jobs of the
     * `deliveries` queue, which carry ids only (job data is clear text, and a target URL can hold
     * its receiver's secret).
     */
    async find(deliveryIds: string[]): Promise<FannedOutDelivery[]> {
      const { rows } = await batchWrites.query<FannedOutRow>(
        `SELECT d.id, d.event_id, d.hook_id, d.status, d.account_id, h.target_url, h.max_per_second, d.queued_at, d.place
         FROM deliveries d JOIN hooks h ON h.id = d.hook_id
         WHERE d.id = ANY($1::uuid[]) AND ${inRange('d.queued_at', '$2', '$3')}`,
        [deliveryIds, ...queuedRange(deliveryIds)],
      );
      return rows.map((row) => ({ ...deliveryOf(row), status: row.status }));
    },

    /** Gives claims back, to `queued`, when nothing was sent under them. Only a claim's claimant can. */
    async giveBack(claims: { deliveryId: string; token: string }[]) {
      const deliveryIds = claims.map((claim) => claim.deliveryId);
      await db.query(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$3', '$4', "d.status = 'sending' AND d.claim_token = ($2::uuid[])[array_position($1::uuid[], d.id)]")}
         UPDATE deliveries d SET status = 'queued', attempted_at = NULL, claim_token = NULL
         FROM locked_deliveries l WHERE d.id = l.id AND d.queued_at = l.queued_at AND ${inRange('d.queued_at', '$3', '$4')}`,
        [deliveryIds, claims.map((claim) => claim.token), ...queuedRange(deliveryIds)],
      );
    },

    /**
     * The outcomes of claimed deliveries' POSTs, and in the same statement their hooks' health
     * (src/storage/hookHealth.ts); a hook the rule says to disable is disabled there too.
     * Returns the hooks this disabled.
     */
    async record(outcomes: (DeliveryOutcome & { deliveryId: string })[], rule: HookDisableRule): Promise<DisabledHook[]> {
      // Locked in id order before anything is written (LOCKED_IN_ID_ORDER), however long the
      // health part below then holds the locks. Each delivery's outcome is read from the arrays at
      // its id's place: joined with unnest() of them, the generic plan on a large table runs the
      // unnest again for each delivery (a nested loop).
      const { rows } = await batchWrites.query<DisabledHook>(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$8', '$9', "d.status = 'sending'")},
         done AS (
           UPDATE deliveries d SET status = ($2::text[])[m.i], response_status = ($3::int[])[m.i], error = ($4::text[])[m.i],
             duration_ms = ($5::int[])[m.i]
           FROM (SELECT id, queued_at, array_position($1::uuid[], id) AS i FROM locked_deliveries) m
           WHERE d.id = m.id AND d.queued_at = m.queued_at AND ${inRange('d.queued_at', '$8', '$9')}
           RETURNING d.hook_id, d.status, d.attempted_at),
         ${updateHealth({ afterMs: '$6', minFailures: '$7' })}
         ${JUST_DISABLED}`,
        [
          outcomes.map((o) => o.deliveryId),
          outcomes.map((o) => o.status),
          outcomes.map((o) => o.responseStatus ?? null),
          outcomes.map((o) => o.error ?? null),
          outcomes.map((o) => Math.round(o.durationMs)),
          ...ruleParams(rule),
          ...queuedRange(outcomes.map((o) => o.deliveryId)),
        ],
      );
      return rows;
    },

    /** Queued deliveries that got no time within DELIVERY_MAX_WAIT: never sent. */
    async expire(deliveryIds: string[]) {
      await batchWrites.query(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$2', '$3', "d.status = 'queued'")},
         done AS (
           UPDATE deliveries d SET status = 'expired' FROM locked_deliveries l
           WHERE d.id = l.id AND d.queued_at = l.queued_at AND ${inRange('d.queued_at', '$2', '$3')}
           RETURNING d.hook_id, d.status),
         ${COUNT_OUTCOMES}
         SELECT count(*) FROM done`,
        [deliveryIds, ...queuedRange(deliveryIds)],
      );
    },

    /**
     * Queued deliveries that wait for a later time, with their places at the gate (null: none
     * yet): the relay leaves each alone until `relayAt` (epoch ms), when it should have been sent,
     * and then adds it again with its place.
     */
    async postpone(entries: { deliveryId: string; relayAt: number; place: number | null }[]) {
      // Each delivery's time and place are read from the arrays at its id's place, as record()'s
      // outcomes are: no join with unnest() of them for a generic plan to loop over.
      await batchWrites.query(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$4', '$5', "d.status = 'queued'")}
         UPDATE deliveries d SET relay_at = to_timestamp(($2::float8[])[m.i] / 1000.0), place = ($3::float8[])[m.i]
         FROM (SELECT id, queued_at, array_position($1::uuid[], id) AS i FROM locked_deliveries) m
         WHERE d.id = m.id AND d.queued_at = m.queued_at AND ${inRange('d.queued_at', '$4', '$5')}`,
        [entries.map((e) => e.deliveryId), entries.map((e) => e.relayAt), entries.map((e) => e.place), ...queuedRange(entries.map((e) => e.deliveryId))],
      );
    },

    /** Renews queued deliveries' leases: the relay leaves each alone until `leaseMs` from now, or its later relay time (a parking's). */
    async extendLeases(deliveryIds: string[], leaseMs: number) {
      await batchWrites.query(
        `WITH ${LOCKED_IN_ID_ORDER('$1', '$3', '$4', "d.status = 'queued'")}
         UPDATE deliveries d SET relay_at = greatest(d.relay_at, clock_timestamp() + make_interval(secs => $2::float8 / 1000))
         FROM locked_deliveries l WHERE d.id = l.id AND d.queued_at = l.queued_at AND ${inRange('d.queued_at', '$3', '$4')}`,
        [deliveryIds, leaseMs, ...queuedRange(deliveryIds)],
      );
    },

    /**
     * How long the oldest overdue queued delivery has been due, in seconds, 0 when none is: the
     * first entry of the deliveries_overdue index, read at each scrape (metrics). It grows when
     * no process sends or relays them (no worker), or when they arrive faster than they leave.
     */
    async oldestDueSeconds() {
      const { rows } = await db.query<{ seconds: number | null }>(
        `SELECT extract(epoch FROM clock_timestamp() - min(relay_at))::float8 AS seconds
         FROM deliveries WHERE status = 'queued' AND relay_at <= clock_timestamp()`,
      );
      return rows[0]?.seconds ?? 0;
    },

    /**
     * Takes up to `limit` overdue queued deliveries (whoever should have sent them died, or lost
     * them), oldest first, for `leaseMs`: another relay leaves them alone meanwhile. Only those
     * queued since `queuedSince` (epoch ms), so only the days since are read: older ones can only
     * expire, which maintenance does (retention.expireUnsent). Returns what their jobs carry.
     */
    async takeOverdue(limit: number, leaseMs: number, queuedSince: number): Promise<Delivery[]> {
      const { rows } = await db.query<FannedOutRow>(
        `UPDATE deliveries d SET relay_at = clock_timestamp() + make_interval(secs => $2 / 1000.0) FROM hooks h
         WHERE (d.id, d.queued_at) IN (
                 SELECT id, queued_at FROM deliveries WHERE status = 'queued' AND relay_at < clock_timestamp() AND queued_at >= $3::timestamptz
                 ORDER BY relay_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           AND d.queued_at >= $3::timestamptz
           AND h.id = d.hook_id
         RETURNING d.id, d.event_id, d.hook_id, d.status, d.account_id, h.target_url, h.max_per_second, d.queued_at, d.place`,
        [limit, leaseMs, new Date(queuedSince).toISOString()],
      );
      return rows.map(deliveryOf);
    },

    /**
     * A page of the delivery log of a hook or an account, newest first by (queued_at, id), from
     * after `filter.after`: keyset paging on an index, so a page costs the same however deep, and
     * rows that arrive meanwhile (newer) never shift the pages after the first. One row more than
     * asked tells whether there is a next page.
     */
    async page(scope: { hookId: string } | { accountId: string }, filter: DeliveryLogFilter) {
      const params: unknown[] = [];
      const param = (value: unknown) => `$${params.push(value)}`;
      const where = ['hookId' in scope ? `d.hook_id = ${param(scope.hookId)}` : `d.account_id = ${param(scope.accountId)}`];
      if (filter.statuses) where.push(`d.status = ANY(${param(filter.statuses)}::text[])`);
      if (filter.since) where.push(`d.queued_at >= ${param(filter.since)}`);
      if (filter.until) where.push(`d.queued_at < ${param(filter.until)}`);
      if (filter.eventId) where.push(`d.event_id = ${param(filter.eventId)}`);
      if (filter.hookId) where.push(`d.hook_id = ${param(filter.hookId)}`);
      if (filter.after) where.push(`(d.queued_at, d.id) < (${param(filter.after.queuedAt)}::timestamptz, ${param(filter.after.id)}::uuid)`);
      const { rows } = await db.query<LogRow>(
        // A delivery's event type is its hook's: fan-out makes deliveries only for the hooks of
        // the event's type, a hook's type never changes, and its row stays while deliveries
        // point at it. Read from the hook, the page's plan takes in one small table, not every
        // day partition of events, which made planning most of the page's cost.
        `SELECT d.id, d.hook_id, d.event_id, h.event_type AS event, d.status, d.response_status, d.error, d.duration_ms, d.queued_at, d.attempted_at,
           to_char(d.queued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
         FROM deliveries d JOIN hooks h ON h.id = d.hook_id
         WHERE ${where.join(' AND ')} ORDER BY d.queued_at DESC, d.id DESC LIMIT ${param(filter.limit + 1)}`,
        params,
      );
      const more = rows.length > filter.limit;
      const page = more ? rows.slice(0, filter.limit) : rows;
      const last = page.at(-1);
      return { rows: page, next: more && last ? { queuedAt: last.position, id: last.id } : undefined };
    },
  };
}

/** A delivery log row; `position` is its queued_at to the microsecond, for the cursor. */
export interface LogRow {
  id: string;
  hook_id: string;
  event_id: string;
  event: EventType;
  status: DeliveryStatus;
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  queued_at: Date;
  attempted_at: Date | null;
  position: string;
}
