import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { openPostgres } from '../../src/storage/database.js';
import { migrate } from '../../src/storage/migrate.js';
import { MIGRATIONS } from '../../src/storage/migrations.js';
import { openPglite } from '../../src/storage/pglite.js';
import { createStore, type Store } from '../../src/storage/store.js';
import { createPostgresDatabase, engines, fanOutOutbox, silentLog } from '../support/databases.js';

const rule = { afterMs: 86_400_000, minFailures: 1_000_000 };
const EVENTS = 50;

/**
 * Migration 7 turns deliveries and events into day-partitioned tables: an install populated
 * before it keeps every row, and the engine goes on with them (the log reads them, a delivery
 * still queued is sent, an event not yet fanned out is), on each engine.
 */
describe.each(engines())('partitioning a populated database on %s', (engine) => {
  let db: Database;
  let store: Store;
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (engine === 'pglite') {
      db = await openPglite(undefined);
      close = () => db.close();
    } else {
      const database = await createPostgresDatabase();
      db = openPostgres(database.url, { log: silentLog });
      close = async () => {
        await db.close();
        await database.drop();
      };
    }
    store = createStore(db);
  });
  afterAll(async () => {
    await close?.();
  });

  /**
   * Each row as JSON (one column, so the statement's result type stays the same across
   * migrations), without the columns migrations 9 and 10 dropped from events (dispatched_at, now the
   * outbox table) and added to it (hook_id).
   */
  const rows = async (table: string) =>
    (await db.query<{ row: Record<string, unknown> }>(`SELECT row_to_json(t) AS row FROM ${table} t ORDER BY id`)).rows.map(({ row }) => {
      const { hook_id: _added, tx: _addedToo, dispatched_at: _dropped, ...kept } = row;
      return JSON.stringify(table === 'events' ? kept : row);
    });

  it('keeps every row, and the engine goes on with them', async () => {
    expect(await migrate(db, 6)).toStrictEqual([1, 2, 3, 4, 5, 6]);
    const keyId = randomUUID();
    const hookId = randomUUID();
    await db.query(`INSERT INTO api_keys (id, account_id, key_hash, source) VALUES ($1, 'acct', 'hash', 'zapier')`, [keyId]);
    await db.query(
      `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, secret, created_at)
       VALUES ($1, $2, 'acct', 'new_contact', 'https://hooks.example.com/m', 'whsec_x', now() - interval '2 days')`,
      [hookId, keyId],
    );
    // Delivered events of the last hours, one still queued, and one not yet fanned out.
    await db.query(
      `WITH fired AS (
         INSERT INTO events (id, account_id, event_type, data, created_at, dispatched_at)
         SELECT gen_random_uuid(), 'acct', 'new_contact', json_build_object('n', n), now() - n * interval '1 minute', now() - n * interval '1 minute'
         FROM generate_series(1, $1::int) n RETURNING id, created_at)
       INSERT INTO deliveries (id, event_id, hook_id, account_id, status, response_status, duration_ms, queued_at, attempted_at)
       SELECT gen_random_uuid(), id, $2, 'acct', 'delivered', 200, 4, created_at + interval '5 ms', created_at + interval '9 ms' FROM fired`,
      [EVENTS, hookId],
    );
    const queuedEvent = randomUUID();
    const queuedDelivery = randomUUID();
    await db.query(`INSERT INTO events (id, account_id, event_type, data, dispatched_at) VALUES ($1, 'acct', 'new_contact', '{}', now())`, [queuedEvent]);
    await db.query(`INSERT INTO deliveries (id, event_id, hook_id, account_id, status, relay_at) VALUES ($1, $2, $3, 'acct', 'queued', now())`, [
      queuedDelivery,
      queuedEvent,
      hookId,
    ]);
    const waitingEvent = randomUUID();
    await db.query(`INSERT INTO events (id, account_id, event_type, data) VALUES ($1, 'acct', 'new_contact', '{"waiting": true}')`, [waitingEvent]);
    const before = { events: await rows('events'), deliveries: await rows('deliveries') };

    // 7 partitions; the ones after it run on the partitioned tables.
    expect(await migrate(db)).toStrictEqual(MIGRATIONS.map((migration) => migration.version).filter((version) => version >= 7));

    // Every row is there as it was, but for the queued delivery's queued_at (now its event's time).
    const after = { events: await rows('events'), deliveries: await rows('deliveries') };
    expect(after.events).toStrictEqual(before.events);
    const unchanged = (list: string[]) => list.filter((row) => !row.includes(queuedDelivery));
    expect(unchanged(after.deliveries)).toStrictEqual(unchanged(before.deliveries));
    expect(after.deliveries).toHaveLength(EVENTS + 1);
    const { rows: placed } = await db.query<{ name: string }>(`SELECT DISTINCT tableoid::regclass::text AS name FROM deliveries`);
    expect(placed.map((row) => row.name)).toStrictEqual([(await store.partitions.list()).deliveries[0]!.name]);

    // The log reads the old rows, with their events' types.
    const page = await store.deliveries.page({ hookId }, { limit: 100 });
    expect(page.rows).toHaveLength(EVENTS + 1);
    expect(new Set(page.rows.map((row) => row.event))).toStrictEqual(new Set(['new_contact']));

    // The delivery still queued is claimed and recorded; the event not yet fanned out is.
    expect(await store.deliveries.claim([queuedDelivery], randomUUID())).toHaveLength(1);
    await store.deliveries.record([{ deliveryId: queuedDelivery, status: 'delivered', responseStatus: 200, durationMs: 3 }], rule);
    const fanned = await fanOutOutbox(store, db);
    expect(fanned.map((delivery) => delivery.accountId)).toStrictEqual(['acct']);
    const [claimed] = await store.deliveries.claim([fanned[0]!.id], randomUUID());
    expect(claimed?.event_id).toBe(waitingEvent);
    const { rows: statuses } = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`,
    );
    expect(statuses).toStrictEqual([
      { status: 'delivered', n: EVENTS + 1 },
      { status: 'sending', n: 1 },
    ]);
  });
});
