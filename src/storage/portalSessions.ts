import { randomUUID } from 'node:crypto';
import type { PortalCapability } from '../domain/portal.js';
import type { Sql } from './database.js';

/** A live portal session, as a request acts on it. */
export interface PortalSessionRow {
  id: string;
  account_id: string;
  capabilities: PortalCapability[];
  expires_at: Date;
}

/** Why a link opened nothing: never minted (or its sessions were ended), opened before, or past its time. */
export type SpentLink = 'unknown' | 'used' | 'expired';

const SESSION_COLUMNS = 'id, account_id, capabilities, expires_at';

export function portalSessionQueries(db: Sql) {
  return {
    /** A session waiting for its link to be opened, until `expiresInSeconds` from now (the database's clock). */
    async create(accountId: string, capabilities: PortalCapability[], linkHash: string, expiresInSeconds: number) {
      const { rows } = await db.query<{ expires_at: Date }>(
        `INSERT INTO portal_sessions (id, account_id, capabilities, link_hash, expires_at)
         VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5)) RETURNING expires_at`,
        [randomUUID(), accountId, capabilities, linkHash, expiresInSeconds],
      );
      return rows[0]!;
    },

    /**
     * Opens a link once: the session takes `sessionHash`, and the link opens nothing again. Two
     * opens at once meet on the row's lock; the second re-reads it opened, and gets nothing.
     */
    async open(linkHash: string, sessionHash: string): Promise<PortalSessionRow | SpentLink> {
      const { rows } = await db.query<PortalSessionRow>(
        `UPDATE portal_sessions SET session_hash = $2, opened_at = clock_timestamp()
         WHERE link_hash = $1 AND opened_at IS NULL AND expires_at > clock_timestamp() RETURNING ${SESSION_COLUMNS}`,
        [linkHash, sessionHash],
      );
      if (rows[0]) return rows[0];
      const spent = await db.query<{ used: boolean }>('SELECT opened_at IS NOT NULL AS used FROM portal_sessions WHERE link_hash = $1', [linkHash]);
      return !spent.rows[0] ? 'unknown' : spent.rows[0].used ? 'used' : 'expired';
    },

    /** The live session a cookie's token stands for. */
    async find(sessionHash: string) {
      const { rows } = await db.query<PortalSessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM portal_sessions WHERE session_hash = $1 AND expires_at > clock_timestamp()`,
        [sessionHash],
      );
      return rows[0];
    },

    /** Ends every session of the account, opened or not: their next request finds nothing. Returns how many. */
    async endForAccount(accountId: string) {
      return (await db.query('DELETE FROM portal_sessions WHERE account_id = $1', [accountId])).rowCount;
    },

    /** Sessions past their time, oldest first, at most `limit` (maintenance). Returns how many. */
    async pruneExpired(limit: number) {
      const { rowCount } = await db.query(
        `DELETE FROM portal_sessions WHERE id IN (
           SELECT id FROM portal_sessions WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [limit],
      );
      return rowCount;
    },
  };
}
