import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/storage/database.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';
import { createPostgresDatabase, silentLog, withPostgres } from '../support/databases.js';

/**
 * A query waits 10 s for its answer; a script given a longer timeout (a migration rebuilding a
 * large table's indexes) gets it. On the PostgreSQL server: PGlite has no timeouts.
 */
describe.runIf(withPostgres)('query and script timeouts on PostgreSQL', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createPostgresDatabase();
    drop = database.drop;
    db = openPostgres(database.url, { log: silentLog });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('lets a script given a longer timeout run past the 10 s a query or another script gets', { timeout: 60_000 }, async () => {
    const started = Date.now();
    await db.exec('SELECT pg_sleep(10.5)', { timeoutMs: 60_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_500);
    await expect(db.query('SELECT pg_sleep(10.5)')).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(db.exec('SELECT pg_sleep(10.5)')).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });
});
