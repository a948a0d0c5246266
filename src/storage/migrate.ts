import type { Database } from './database.js';
import { MIGRATIONS } from './migrations.js';
import { partitionQueries } from './partitions.js';

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 7_340_112;
/**
 * A migration may rebuild the indexes of a large table (migration 7): minutes, not the 10 s a
 * request's query is given.
 */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;
/** The migration that partitions deliveries and events by day. */
const DAY_PARTITIONS = 7;

/**
 * Applies pending migrations in one transaction (concurrent starters wait on an advisory lock),
 * then creates the day partitions of the days ahead (src/storage/partitions.ts), so a new
 * install or a deploy never depends on maintenance having run. `upTo` stops at a version: for
 * tests of a migration over a populated database.
 */
export async function migrate(db: Database, upTo = Number.POSITIVE_INFINITY): Promise<number[]> {
  const done = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.version) && migration.version <= upTo);
    for (const migration of pending) {
      await tx.exec(migration.sql, { timeoutMs: MIGRATION_TIMEOUT_MS });
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    return pending.map((migration) => migration.version);
  });
  if (upTo >= DAY_PARTITIONS) await partitionQueries(db).ensure();
  return done;
}
