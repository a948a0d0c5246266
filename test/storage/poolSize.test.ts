import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/storage/database.js';
import { openStore } from '../../src/storage/store.js';
import { createPostgresDatabase, withPostgres, silentLog } from '../support/databases.js';

const CONCURRENT_QUERIES = 12;
/** pg's pool closes a connection idle this long (its default), down to the pool's minimum. */
const IDLE_TIMEOUT_MS = 10_000;

/** DATABASE_POOL_SIZE bounds the connections one process opens to PostgreSQL, whatever its load; a quiet spell keeps a few. */
describe.runIf(withPostgres)('DATABASE_POOL_SIZE', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let observer: pg.Client;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    observer = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await database?.drop();
  });

  /** Runs CONCURRENT_QUERIES slow queries at once through a store; the most connections it held meanwhile. */
  async function connectionsUnderLoad(env: Record<string, string>) {
    const { store } = await openStore(loadConfig({ DATABASE_URL: database.url, ...env }), silentLog);
    try {
      let done = false;
      const load = Promise.all(Array.from({ length: CONCURRENT_QUERIES }, () => store.db.query('SELECT pg_sleep(0.5)'))).finally(() => (done = true));
      let most = 0;
      while (!done) {
        const { rows } = await observer.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
          [new URL(database.url).pathname.slice(1)],
        );
        most = Math.max(most, rows[0]!.n);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await load;
      return most;
    } finally {
      await store.close();
    }
  }

  it('opens at most DATABASE_POOL_SIZE connections', async () => {
    expect(await connectionsUnderLoad({ DATABASE_POOL_SIZE: '3' })).toBe(3);
  });

  it('opens up to 20 by default', async () => {
    expect(await connectionsUnderLoad({})).toBe(CONCURRENT_QUERIES);
  });

  it('keeps one connection and those holding the engine plans through a quiet spell, and closes the rest', async () => {
    const { store } = await openStore(loadConfig({ DATABASE_URL: database.url }), silentLog);
    const pid = async (db: Database) => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    try {
      await Promise.all(Array.from({ length: 5 }, () => store.db.query('SELECT pg_sleep(0.2)')));
      const planned = await pid(store.db.genericPlans());
      await sleep(IDLE_TIMEOUT_MS + 1_500);
      const { rows } = await observer.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [new URL(database.url).pathname.slice(1)],
      );
      expect(rows[0]!.n).toBe(2);
      expect(await pid(store.db.genericPlans())).toBe(planned);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('refuses a size that is not a positive integer, naming the variable', () => {
    for (const size of ['0', '-1', 'many', '2.5']) {
      expect(() => loadConfig({ DATABASE_POOL_SIZE: size })).toThrow(/DATABASE_POOL_SIZE/);
    }
  });
});
