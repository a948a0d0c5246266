import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase } from '../../kit/databases.js';
import { openPostgres, type Database } from '../../src/storage/database.js';
import { openPglite } from '../../src/storage/pglite.js';
import { migrate } from '../../src/storage/migrate.js';
import { createStore, type Store } from '../../src/storage/store.js';
import type { ValidContact } from '../../src/domain/contact.js';
import { RELAY_GRACE_MS, type Delivery } from '../../src/domain/delivery.js';
import { FIRED_AT, type FannedOutDelivery } from '../../src/storage/events.js';

/** Tests read what they need from the store itself; its own warnings would only be noise. */
export const silentLog = pino({ level: 'silent' });

export type Engine = 'pglite' | 'postgres';

/**
 * The engines a storage or API suite runs on: PGlite always, the PostgreSQL server whenever
 * DATABASE_URL is set. Under CI a missing DATABASE_URL is an error, not a silent skip.
 */
export function engines(): Engine[] {
  if (process.env.DATABASE_URL) return ['pglite', 'postgres'];
  if (process.env.CI) throw new Error('CI must set DATABASE_URL so the PostgreSQL suites run');
  return ['pglite'];
}

/**
 * Whether suites that need the PostgreSQL server run: always under CI (where a missing
 * DATABASE_URL then fails them), and wherever DATABASE_URL is set.
 */
export const withPostgres = Boolean(process.env.CI || process.env.DATABASE_URL);

/** Creates an empty database on the server for one test file; drop it with the returned function. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is not set');
  return createDatabase(adminUrl, 'contact_hooks_test');
}

/** A migrated, empty store on the engine, and a function that closes (and drops) it. */
export async function openTestStore(engine: Engine): Promise<{ store: Store; db: Database; url?: string; cleanup: () => Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openPglite(undefined);
    await migrate(db);
    return { store: createStore(db), db, cleanup: () => db.close() };
  }
  const database = await createPostgresDatabase();
  const db = openPostgres(database.url, { log: silentLog });
  await migrate(db);
  return {
    store: createStore(db),
    db,
    url: database.url,
    cleanup: async () => {
      await db.close();
      await database.drop();
    },
  };
}

/** A store whose database does not answer: a PostgreSQL server nobody listens for, or a closed PGlite. */
export async function unreachableStore(engine: Engine): Promise<Store> {
  if (engine === 'postgres') return createStore(openPostgres('postgres://postgres@127.0.0.1:1/none', { max: 1, log: silentLog }));
  const db = await openPglite(undefined);
  await db.close();
  return createStore({ ...db, close: async () => {} });
}

export type TestStore = Awaited<ReturnType<typeof openTestStore>>;

/**
 * The calling suite's migrated, empty store on the engine: opened before its tests and closed
 * after them by the hooks this registers, like useTestApp. Use `t.store` and `t.db` in tests.
 */
export function useTestStore(engine: Engine): Pick<TestStore, 'store' | 'db'> {
  let opened: TestStore | undefined;
  beforeAll(async () => {
    opened = await openTestStore(engine);
  });
  afterAll(async () => {
    await opened?.cleanup();
  });
  const current = () => {
    if (!opened) throw new Error('useTestStore: the store opens in beforeAll; use it inside tests and hooks');
    return opened;
  };
  return {
    get store() {
      return current().store;
    },
    get db() {
      return current().db;
    },
  };
}

/** One upsert straight through storage, as a batch of one. */
export async function upsertContact(store: Store, accountId: string, input: ValidContact, source: string) {
  const results = await store.contacts.upsert([{ accountId, input, source }], RELAY_GRACE_MS);
  return results[0]!;
}

/**
 * New contacts of the account, one upsert each, straight through storage, and their `new_contact`
 * events fanned out as a worker's job would: the deliveries, in order. Each is leased to the
 * caller for `leaseMs`, a minute unless said: no relay takes one during a test.
 */
export async function newContactDeliveries(store: Store, accountId: string, phones: string[], leaseMs = 60_000): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  for (const phone of phones) {
    const [result] = await store.contacts.upsert([{ accountId, input: { phone, fields: {} }, source: 'crm' }], RELAY_GRACE_MS);
    if (result?.action === 'inserted' && result.fired) deliveries.push(...(await store.events.fanOut([result.fired], leaseMs)));
  }
  return deliveries;
}

/**
 * `count` events of `accountId` recorded straight into storage, as the web's statements record
 * them (each with its outbox row), at `at` (the database's clock unless given). Returns their ids.
 */
export async function recordEvents(db: Database, accountId: string, count: number, options: { type?: string; at?: Date } = {}): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH recorded AS (
       INSERT INTO events (id, account_id, event_type, data, created_at)
       SELECT gen_random_uuid(), $1, $3, '{}', coalesce($4::timestamptz, clock_timestamp()) FROM generate_series(1, $2)
       RETURNING id, account_id, event_type, created_at),
     outboxed AS (INSERT INTO event_outbox SELECT id, account_id, event_type, created_at, created_at FROM recorded)
     SELECT id FROM recorded ORDER BY created_at, id`,
    [accountId, count, options.type ?? 'new_contact', options.at ?? null],
  );
  return rows.map((row) => row.id);
}

/** Fans out every event in the outbox, oldest first, as workers' jobs would: their deliveries, leased for `leaseMs`. */
export async function fanOutOutbox(store: Store, db: Database, leaseMs = 60_000): Promise<FannedOutDelivery[]> {
  const { rows } = await db.query<{ event_id: string; fired_at: string }>(
    `SELECT event_id, ${FIRED_AT('created_at')} AS fired_at FROM event_outbox ORDER BY created_at, event_id`,
  );
  return rows.length === 0 ? [] : store.events.fanOut(rows, leaseMs);
}
