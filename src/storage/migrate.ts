import type { Database } from './database.js';
import { MIGRATIONS } from './migrations.js';

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 7_340_112;

/** Applies pending migrations in one transaction; concurrent starters wait on an advisory lock. */
export async function migrate(db: Database): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    return pending.map((migration) => migration.version);
  });
}
