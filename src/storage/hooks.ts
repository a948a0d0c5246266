import { randomUUID } from 'node:crypto';
import type { EventType } from '../domain/events.js';
import type { Database } from './database.js';

export interface HookRow {
  id: string;
  event_type: EventType;
  target_url: string;
  max_per_second: number | null;
  created_at: Date;
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
        const { rows } = await tx.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM hooks WHERE api_key_id = $1 AND deleted_at IS NULL',
          [key.keyId],
        );
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
      const { rows } = await db.query<HookRow>(
        `SELECT ${HOOK_COLUMNS} FROM hooks WHERE api_key_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
        [keyId],
      );
      return rows;
    },

    async findForKey(keyId: string, hookId: string) {
      const { rows } = await db.query<HookRow>(
        `SELECT ${HOOK_COLUMNS} FROM hooks WHERE id = $1 AND api_key_id = $2 AND deleted_at IS NULL`,
        [hookId, keyId],
      );
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

    /** A target that answered 410 Gone asked to be forgotten (REST Hooks). */
    async deleteGone(hookId: string) {
      await db.query(`UPDATE hooks SET deleted_at = clock_timestamp(), secret = '' WHERE id = $1 AND deleted_at IS NULL`, [hookId]);
    },
  };
}
