/**
 * A database of the partition growth figure: created and migrated, opened through the service's
 * own store (traced), with its seeding and admin connections, its accounts and its day
 * partitions. The figure grows one in place; a second one, kept at the smallest size, is measured
 * beside it (bench/measure/claimsBeside.ts).
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { pino } from 'pino';
import { createDatabase } from '../../kit/databases.js';
import { openPostgres, type Database } from '../../src/storage/database.js';
import { migrate } from '../../src/storage/migrate.js';
import type { BenchContext } from '../context.js';
import { createTracedStore, type TracedStore } from '../measure/queryPlans.js';
import { prepareDays, SEEDERS, seedAccounts, type GrowthDays } from './partitionSeeding.js';

const STORE_POOL = 4;
const silentLog = pino({ level: 'silent' });

export interface GrowthDatabase {
  db: Database;
  traced: TracedStore;
  /** Connections that seed rows (no per-row FK trigger, no wait for each commit's flush). */
  seeders: pg.Client[];
  /** A plain connection: EXPLAIN, VACUUM, retention's steps. */
  admin: pg.Client;
  growth: GrowthDays;
  hooks: { fillerHook: string; measuredHook: string };
  /** Closes the connections and drops the database. */
  close(): Promise<void>;
}

/** Drops the database even when the run is interrupted (run.ts exits at once on SIGINT). */
function dropOnInterrupt(adminUrl: string, name: string) {
  const handler = () => {
    spawnSync('psql', ['-d', adminUrl, '-q', '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: 'ignore', timeout: 10_000 });
  };
  process.prependListener('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

export async function openGrowthDatabase(ctx: BenchContext, prefix: string): Promise<GrowthDatabase> {
  const database = await createDatabase(ctx.settings.adminUrl, prefix);
  const forget = dropOnInterrupt(ctx.settings.adminUrl, database.name);
  const clients: pg.Client[] = [];
  const db = openPostgres(database.url, { max: STORE_POOL, log: silentLog });
  const close = async () => {
    for (const c of clients) await c.end().catch(() => {});
    await db.close().catch(() => {});
    await database.drop();
    forget();
    ctx.progress(`  dropped database ${database.name}`);
  };
  try {
    await migrate(db);
    const client = async (setup: string[]) => {
      const c = new pg.Client({ connectionString: database.url });
      clients.push(c);
      await c.connect();
      for (const statement of setup) await c.query(statement);
      return c;
    };
    // Seeding writes rows valid by construction: no foreign-key trigger per row, no wait for each commit's flush.
    const seeders = await Promise.all(
      Array.from({ length: SEEDERS }, () => client(['SET session_replication_role = replica', 'SET synchronous_commit = off'])),
    );
    const admin = await client([]);
    const traced = createTracedStore(db);
    const hooks = await seedAccounts((text, params) => db.query(text, params));
    const growth = await prepareDays(traced.store);
    return { db, traced, seeders, admin, growth, hooks, close };
  } catch (error) {
    await close();
    throw error;
  }
}
