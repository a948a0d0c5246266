import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/storage/database.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';
import { createPostgresDatabase, silentLog, withPostgres } from '../support/databases.js';

/**
 * A request's query gets 10 s; a script (a migration rebuilding a large table's indexes, a
 * partition's DDL) gets as long as it needs. On the PostgreSQL server: PGlite has no timeouts.
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

  it('lets a script run past the 10 s a query gets, and stops a query there', { timeout: 40_000 }, async () => {
    const started = Date.now();
    await db.exec('SELECT pg_sleep(10.5)');
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_500);
    await expect(db.query('SELECT pg_sleep(10.5)')).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });
});
