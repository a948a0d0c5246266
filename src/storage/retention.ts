import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Sql } from './database.js';
import { COUNT_OUTCOMES, JUST_DISABLED, ruleParams, updateHealth, type DisabledHook } from './hookHealth.js';

/**
 * Bounded storage: each query handles at most `limit` rows in one short statement, oldest first,
 * so a large backlog is worked off in many small transactions that never hold locks for long.
 * Rows another pruner holds are skipped (workers run these concurrently). Each returns how many
 * rows it changed. `retentionMs` is RETENTION_DAYS; the cutoff is taken on the database's clock.
 * Rows of deliveries and events are named with their partition key, (id, queued_at) and (id,
 * created_at), so each is looked for in its own day's partition only.
 */

const cutoff = (param: string) => `clock_timestamp() - make_interval(secs => ${param} / 1000.0)`;

/** A deleted subscription may still be read by a fan-out that began just before its deletion. */
const DELETED_HOOK_GRACE_MS = 60_000;

export function retentionQueries(db: Sql) {
  const run = async (text: string, params: unknown[]) => (await db.query(text, params)).rowCount;
  return {
    /**
     * Claims still `sending` past `olderThanMs`: their worker died mid-POST. Unknown, never
     * retried; a failure to its hook's health, like any other (src/storage/hookHealth.ts), in the
     * same statement. Returns how many, and the hooks this disabled.
     */
    async markStuckUnknown(olderThanMs: number, limit: number, rule: HookDisableRule) {
      const { rows } = await db.query<{ changed: number } & (DisabledHook | { id: null })>(
        `WITH done AS (
           UPDATE deliveries SET status = 'unknown' WHERE (id, queued_at) IN (
             SELECT id, queued_at FROM deliveries WHERE status = 'sending' AND attempted_at < ${cutoff('$1')}
             ORDER BY attempted_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING hook_id, status, attempted_at),
         ${updateHealth({ afterMs: '$3', minFailures: '$4' })},
         disabled AS (${JUST_DISABLED})
         -- One row at least, for the count, whether or not a hook was disabled.
         SELECT (SELECT count(*) FROM done)::int AS changed, disabled.* FROM (SELECT 1) one LEFT JOIN disabled ON true`,
        [olderThanMs, limit, ...ruleParams(rule)],
      );
      return { changed: rows[0]?.changed ?? 0, disabled: rows.filter((row): row is DisabledHook & { changed: number } => row.id !== null) };
    },

    /**
     * Deliveries still queued more than `maxWaitMs` (DELIVERY_MAX_WAIT) after their event: they
     * can no longer be sent, and the relay no longer reads their days. Expired, counted in their
     * hooks' hourly outcomes like any expiry. Returns how many.
     */
    async expireUnsent(maxWaitMs: number, limit: number) {
      const { rows } = await db.query<{ changed: number }>(
        `WITH done AS (
           UPDATE deliveries SET status = 'expired' WHERE (id, queued_at) IN (
             SELECT id, queued_at FROM deliveries WHERE status = 'queued' AND queued_at < ${cutoff('$1')}
             ORDER BY relay_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING hook_id, status),
         ${COUNT_OUTCOMES}
         SELECT count(*)::int AS changed FROM done`,
        [maxWaitMs, limit],
      );
      return rows[0]!.changed;
    },

    /** Hourly outcome counts past the week a hook's charts draw (last_24h sums only the latest 24). */
    pruneOutcomeHours: (limit: number) =>
      run(
        `DELETE FROM hook_outcome_hours WHERE (hook_id, hour, status) IN (
           SELECT hook_id, hour, status FROM hook_outcome_hours WHERE hour < clock_timestamp() - interval '8 days'
           ORDER BY hour LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [limit],
      ),

    /** Delivery log rows queued before the cutoff, unless still queued or sending. */
    pruneDeliveries: (retentionMs: number, limit: number) =>
      run(
        `DELETE FROM deliveries WHERE (id, queued_at) IN (
           SELECT id, queued_at FROM deliveries WHERE queued_at < ${cutoff('$1')} AND status NOT IN ('queued', 'sending')
           ORDER BY queued_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [retentionMs, limit],
      ),

    /**
     * Events older than the cutoff that were fanned out and that no delivery points at any more
     * (so none is queued or sending). An event still in the outbox is never pruned.
     */
    pruneEvents: (retentionMs: number, limit: number) =>
      run(
        `DELETE FROM events WHERE (id, created_at) IN (
           SELECT e.id, e.created_at FROM events e WHERE e.created_at < ${cutoff('$1')}
             AND NOT EXISTS (SELECT 1 FROM event_outbox o WHERE o.event_id = e.id)
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
           ORDER BY e.created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [retentionMs, limit],
      ),

    /** Calls (with their summaries, personal data) older than the cutoff. Events keep their own copy. */
    pruneCalls: (retentionMs: number, limit: number) =>
      run(
        `DELETE FROM calls WHERE (account_id, conversation_id) IN (
           SELECT account_id, conversation_id FROM calls WHERE created_at < ${cutoff('$1')}
           ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [retentionMs, limit],
      ),

    /**
     * Deleted subscriptions no delivery row points at, deleted before the cutoff or a minute ago,
     * whichever is later: the row was kept only for the delivery log.
     */
    pruneDeletedHooks: (retentionMs: number, limit: number) =>
      run(
        `DELETE FROM hooks WHERE id IN (
           SELECT h.id FROM hooks h
           WHERE h.deleted_at < greatest(${cutoff('$1')}, clock_timestamp() - make_interval(secs => $3 / 1000.0))
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.hook_id = h.id)
           ORDER BY h.deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [retentionMs, limit, DELETED_HOOK_GRACE_MS],
      ),

    /** Keys revoked before the cutoff that no subscription row points at any more. */
    pruneRevokedKeys: (retentionMs: number, limit: number) =>
      run(
        `DELETE FROM api_keys WHERE id IN (
           SELECT k.id FROM api_keys k WHERE k.revoked_at < ${cutoff('$1')}
             AND NOT EXISTS (SELECT 1 FROM hooks h WHERE h.api_key_id = k.id)
           ORDER BY k.revoked_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [retentionMs, limit],
      ),
  };
}
