import { randomUUID } from 'node:crypto';
import type { Caller } from '../domain/apiKey.js';
import type { Database } from './database.js';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  source: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const KEY_COLUMNS = 'id, account_id, source, name, created_at, revoked_at, last_used_at';

export function keyQueries(db: Database) {
  return {
    async create(accountId: string, keyHash: string, source: string, name: string | undefined) {
      const { rows } = await db.query<ApiKeyRow>(
        `INSERT INTO api_keys (id, account_id, key_hash, source, name) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}`,
        [randomUUID(), accountId, keyHash, source, name ?? null],
      );
      return rows[0]!;
    },

    async listForAccount(accountId: string) {
      const { rows } = await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`, [accountId]);
      return rows;
    },

    async findActiveByHash(keyHash: string): Promise<Caller | undefined> {
      const { rows } = await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, [keyHash]);
      const row = rows[0];
      return row && { keyId: row.id, accountId: row.account_id, source: row.source, name: row.name, createdAt: row.created_at };
    },

    /** Notes that the key authenticated a request now, unless it was noted within the last minute. */
    async noteUse(keyId: string) {
      await db.query(
        `UPDATE api_keys SET last_used_at = clock_timestamp()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < clock_timestamp() - interval '1 minute')`,
        [keyId],
      );
    },

    /**
     * Gives a live key a new secret, keeping its id and so its subscriptions, source and name.
     * The old hash is overwritten, so the old secret stops working with this commit. Undefined
     * when no live key has that id.
     */
    async rotate(keyId: string, keyHash: string) {
      const { rows } = await db.query<ApiKeyRow>(`UPDATE api_keys SET key_hash = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`, [
        keyId,
        keyHash,
      ]);
      return rows[0];
    },

    /**
     * Revokes a key and deletes its hooks (and only its hooks) in one transaction. Idempotent: a
     * key already revoked stays revoked at its first time, and any hook still live under it is
     * deleted all the same. False only when no key has that id.
     */
    async revoke(keyId: string) {
      return db.transaction(async (tx) => {
        // The row lock waits for any subscribe holding this key, so its hook is seen (and deleted) below.
        const { rowCount } = await tx.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, clock_timestamp()) WHERE id = $1', [keyId]);
        if (rowCount === 0) return false;
        await tx.query(`UPDATE hooks SET deleted_at = clock_timestamp(), secret = '' WHERE api_key_id = $1 AND deleted_at IS NULL`, [keyId]);
        return true;
      });
    },
  };
}
