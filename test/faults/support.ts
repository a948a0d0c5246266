import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPglite } from '../../src/storage/pglite.js';
import { INTERNAL_TOKEN } from '../support/app.js';
import { createPostgresDatabase, type Engine } from '../support/databases.js';

/**
 * Shared pieces of the fault suite: a store for a server process on either engine, and direct
 * SQL against it from the test, to check what was really committed.
 */

/** Runs one query against a PostgreSQL database on its own connection. */
export async function pgQuery<Row = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<Row[]> {
  const connection = new pg.Client({ connectionString: url });
  await connection.connect();
  try {
    return (await connection.query(text, params)).rows as Row[];
  } finally {
    await connection.end();
  }
}

export interface ServiceStore {
  engine: Engine;
  /** Environment for the web process: DATA_DIR or DATABASE_URL. */
  env: Record<string, string>;
  /**
   * Runs a query against what the service committed. PGlite allows one process per data
   * directory, so call it only while no service process runs on it.
   */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>;
  cleanup(): Promise<void>;
}

/** An empty store for a server process: a PGlite data directory, or a fresh PostgreSQL database. */
export async function serviceStore(engine: Engine): Promise<ServiceStore> {
  if (engine === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-fault-'));
    return {
      engine,
      env: { DATA_DIR: dataDir },
      async query<Row>(text: string, params: unknown[] = []) {
        const db = await openPglite(dataDir);
        try {
          return (await db.query<Row>(text, params)).rows;
        } finally {
          await db.close();
        }
      },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const database = await createPostgresDatabase();
  return {
    engine,
    env: { DATABASE_URL: database.url },
    query: (text, params) => pgQuery(database.url, text, params),
    cleanup: database.drop,
  };
}

/** What every service process in the suite shares. */
export const baseEnv = {
  INTERNAL_API_TOKEN: INTERNAL_TOKEN,
  DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
  // The suite hammers one key on purpose; the limiter is not what is under test.
  RATE_LIMIT_PER_MINUTE: '1000000',
  LOG_LEVEL: 'warn',
};

/** Distinct phone numbers, new in every call (E.164, +1 and ten digits). */
let nextPhone = 2_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1000;
export const newPhone = () => `+1${nextPhone++}`;

export { percentile } from '../../kit/statistics.js';

/** Counts per key: how many POSTs each webhook-id got, for instance. */
export function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
