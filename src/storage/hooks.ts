import { randomUUID } from 'node:crypto';
import type { EventType } from '../domain/events.js';
import type { DisabledReason, HookState } from '../domain/hookHealth.js';
import type { Database } from './database.js';

export interface HookRow {
  id: string;
  event_type: EventType;
  target_url: string;
  max_per_second: number | null;
  created_at: Date;
}

/** A hook with its state and health, as the hook routes show it. */
export interface HookWithHealth extends HookRow {
  /** The key that made it. */
  key_id: string;
  state: HookState;
  disabled_reason: DisabledReason | null;
  disabled_at: Date | null;
  last_delivered_at: Date | null;
  last_failed_at: Date | null;
  consecutive_failures: number;
  skipped: number;
  /** Outcomes by status over the last 24 hourly buckets (src/storage/hookHealth.ts). */
  last_24h: Record<string, number>;
}

export interface NewHook {
  eventType: EventType;
  targetUrl: string;
  /** null: the service's DELIVERY_RATE_PER_TARGET. */
  maxPerSecond: number | null;
  secret: string;
}

export type CreateHookResult = { outcome: 'created'; hook: HookRow } | { outcome: 'key_revoked' } | { outcome: 'limit_reached' };

const HOOK_COLUMNS = 'id, event_type, target_url, max_per_second, created_at';
/**
 * The hook, its state and its health: columns the outcome writes keep current, and at most 24
 * hourly counts per status (the current hour and the 23 before), read through their key.
 */
const WITH_HEALTH = `SELECT h.id, h.api_key_id AS key_id, h.event_type, h.target_url, h.max_per_second, h.created_at, h.state, h.disabled_reason, h.disabled_at,
    h.last_delivered_at, h.last_failed_at, h.consecutive_failures, h.skipped,
    (SELECT coalesce(json_object_agg(c.status, c.count), '{}') FROM (
       SELECT status, sum(count)::int AS count FROM hook_outcome_hours
       WHERE hook_id = h.id AND hour > statement_timestamp() - interval '24 hours' GROUP BY status) c) AS last_24h
  FROM hooks h`;

export function hookQueries(db: Database) {
  return {
    /**
     * Creates a subscription under a live key that holds fewer than `limit`. The key's row is
     * locked only while it is live: a revocation that committed after the request's key check
     * is seen here (PostgreSQL re-reads the locked row), and one that comes later waits for this
     * insert and then deletes it. Either way no live hook is left under a revoked key. The lock
     * also keeps concurrent subscribes from both passing the count.
     */
    async create(key: { keyId: string; accountId: string }, hook: NewHook, limit: number): Promise<CreateHookResult> {
      return db.transaction(async (tx) => {
        const live = await tx.query('SELECT id FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE', [key.keyId]);
        if (live.rows.length === 0) return { outcome: 'key_revoked' };
        const { rows } = await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM hooks WHERE api_key_id = $1 AND deleted_at IS NULL', [
          key.keyId,
        ]);
        if ((rows[0]?.count ?? 0) >= limit) return { outcome: 'limit_reached' };
        const created = await tx.query<HookRow>(
          `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, max_per_second, secret)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${HOOK_COLUMNS}`,
          [randomUUID(), key.keyId, key.accountId, hook.eventType, hook.targetUrl, hook.maxPerSecond, hook.secret],
        );
        return { outcome: 'created', hook: created.rows[0]! };
      });
    },

    async listForKey(keyId: string) {
      const { rows } = await db.query<HookWithHealth>(`${WITH_HEALTH} WHERE h.api_key_id = $1 AND h.deleted_at IS NULL ORDER BY h.created_at, h.id`, [keyId]);
      return rows;
    },

    /** An account's live hooks, under any of its keys: what its owner sees (first-party). */
    async listForAccount(accountId: string) {
      const { rows } = await db.query<HookWithHealth>(`${WITH_HEALTH} WHERE h.account_id = $1 AND h.deleted_at IS NULL ORDER BY h.created_at, h.id`, [
        accountId,
      ]);
      return rows;
    },

    async findForKey(keyId: string, hookId: string) {
      const { rows } = await db.query<HookWithHealth>(`${WITH_HEALTH} WHERE h.id = $1 AND h.api_key_id = $2 AND h.deleted_at IS NULL`, [hookId, keyId]);
      return rows[0];
    },

    /**
     * Enables a live hook of the key's (`keyId`) or of the account's (`accountId`): it is sent
     * its events again, and its failure streak starts over. True when there was such a hook.
     */
    async enable(owner: { keyId: string } | { accountId: string }, hookId: string) {
      const [column, value] = 'keyId' in owner ? ['api_key_id', owner.keyId] : ['account_id', owner.accountId];
      const { rowCount } = await db.query(
        `UPDATE hooks SET state = 'active', disabled_reason = NULL, disabled_at = NULL, consecutive_failures = 0, failing_since = NULL
         WHERE id = $1 AND ${column} = $2 AND deleted_at IS NULL`,
        [hookId, value],
      );
      return rowCount > 0;
    },

    async findForAccount(accountId: string, hookId: string) {
      const { rows } = await db.query<HookWithHealth>(`${WITH_HEALTH} WHERE h.id = $1 AND h.account_id = $2 AND h.deleted_at IS NULL`, [hookId, accountId]);
      return rows[0];
    },

    /**
     * True when the key's live hook existed and is now deleted. A deleted hook signs nothing
     * again, so its secret is blanked here; the row stays while delivery rows point at it.
     */
    async deleteForKey(keyId: string, hookId: string) {
      const { rowCount } = await db.query(
        `UPDATE hooks SET deleted_at = clock_timestamp(), secret = '' WHERE id = $1 AND api_key_id = $2 AND deleted_at IS NULL`,
        [hookId, keyId],
      );
      return rowCount > 0;
    },

    /**
     * The hook's outcome counts per hour and status over the last `hours` hours (the current one
     * included): what its charts draw. Kept eight days (retention.ts, pruneOutcomeHours).
     */
    async outcomeHours(hookId: string, hours: number) {
      const { rows } = await db.query<{ hour: Date; status: string; count: number }>(
        `SELECT hour, status, count FROM hook_outcome_hours
         WHERE hook_id = $1 AND hour > statement_timestamp() - make_interval(hours => $2) ORDER BY hour, status`,
        [hookId, hours],
      );
      return rows;
    },

    /** As deleteForKey, for a live hook of the account's, whichever key made it (its owner's portal). */
    async deleteForAccount(accountId: string, hookId: string) {
      const { rowCount } = await db.query(
        `UPDATE hooks SET deleted_at = clock_timestamp(), secret = '' WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`,
        [hookId, accountId],
      );
      return rowCount > 0;
    },

    /** A target that answered 410 Gone asked to be forgotten (REST Hooks). */
    async deleteGone(hookId: string) {
      await db.query(`UPDATE hooks SET deleted_at = clock_timestamp(), secret = '' WHERE id = $1 AND deleted_at IS NULL`, [hookId]);
    },
  };
}
