import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/storage/store.js';
import { issueKey } from '../support/app.js';
import { openTestStore, withPostgres, type TestStore, newContactDeliveries } from '../support/databases.js';
import { newAccount } from '../support/http.js';
import { waitUntil } from '../../kit/waiting.js';

const HOOKS = 8;

/**
 * Every statement that writes a batch of deliveries locks them in id order before writing
 * (LOCKED_IN_ID_ORDER in src/storage/deliveries.ts), so two batches sharing deliveries wait for
 * each other and never deadlock. Shown on the server (PGlite has one connection, so nothing
 * there waits): with the lowest id of a batch locked elsewhere, a batch write has locked none of
 * its other deliveries, not even one stored (and so read) before it.
 */
describe.runIf(withPostgres)('batch writes of deliveries on postgres', () => {
  let opened: TestStore;
  let holder: pg.Client;
  let checker: pg.Client;
  beforeAll(async () => {
    opened = await openTestStore('postgres');
    holder = new pg.Client({ connectionString: opened.url });
    checker = new pg.Client({ connectionString: opened.url });
    await Promise.all([holder.connect(), checker.connect()]);
  });
  afterAll(async () => {
    await Promise.all([holder?.end(), checker?.end()]);
    await opened?.cleanup();
  });

  /**
   * One event to HOOKS subscriptions: deliveries of one millisecond, whose ids (UUIDv7, random
   * after the time) are in no particular order against the order they were stored in. Returns
   * two of them, `stored` before `lower` in the table but with the higher id. One event in 8!
   * stores its deliveries in id order by chance; the next event then gives the pair.
   */
  async function outOfOrderPair(store: Store) {
    for (let event = 0; event < 3; event++) {
      const pair = await outOfOrderPairOfOneEvent(store);
      if (pair) return pair;
    }
    throw new Error(`three events in a row stored their ${HOOKS} deliveries in id order`);
  }

  /** The pair from one new account's one event, or undefined when its deliveries were stored in id order. */
  async function outOfOrderPairOfOneEvent(store: Store) {
    const accountId = newAccount();
    const key = await issueKey(store, accountId);
    for (let i = 0; i < HOOKS; i++) {
      const created = await store.hooks.create(
        { keyId: key.id, accountId },
        { eventType: 'new_contact', targetUrl: `https://hooks.example.com/order/${i}`, maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
        HOOKS,
      );
      if (created.outcome !== 'created') throw new Error(created.outcome);
    }
    await newContactDeliveries(store, accountId, [`+1415${Math.floor(1e6 + Math.random() * 8e6)}`]);
    const { rows } = await opened.db.query<{ id: string }>(
      `SELECT d.id::text FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.account_id = $1 ORDER BY d.ctid`,
      [accountId],
    );
    if (rows.length !== HOOKS) throw new Error(`the event has ${rows.length} deliveries, not ${HOOKS}`);
    for (let i = 0; i < rows.length; i++) {
      for (let j = i + 1; j < rows.length; j++) if (rows[i]!.id > rows[j]!.id) return { stored: rows[i]!.id, lower: rows[j]!.id };
    }
    return undefined;
  }

  /** Whether `id` is locked by someone: a lock that does not wait says so. */
  async function isLocked(id: string) {
    await checker.query('BEGIN');
    try {
      await checker.query('SELECT id FROM deliveries WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [id]);
      return false;
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') return true;
      throw error;
    } finally {
      await checker.query('ROLLBACK');
    }
  }

  /** A batch write of `ids`, and what must be done to them before it (unlocked): an outcome is recorded for a claim. */
  interface BatchWrite {
    before?: (store: Store, ids: string[]) => Promise<unknown>;
    write: (store: Store, ids: string[]) => Promise<unknown>;
  }
  const writes: Array<[string, BatchWrite]> = [
    ['a claim', { write: (store, ids) => store.deliveries.claim(ids, randomUUID()) }],
    ['an expiry', { write: (store, ids) => store.deliveries.expire(ids) }],
    ['a postponement', { write: (store, ids) => store.deliveries.postpone(ids.map((deliveryId) => ({ deliveryId, relayAt: Date.now() + 60_000, place: 0 }))) }],
    [
      'an outcome write',
      {
        before: async (store, ids) => expect(await store.deliveries.claim(ids, randomUUID())).toHaveLength(ids.length),
        write: (store, ids) =>
          store.deliveries.record(
            ids.map((deliveryId) => ({ deliveryId, status: 'delivered' as const, responseStatus: 200, durationMs: 1 })),
            { afterMs: 86_400_000, minFailures: 1_000_000 },
          ),
      },
    ],
  ];
  it.each(writes)('%s locks its deliveries in id order', async (_name, { before, write }) => {
    const { stored, lower } = await outOfOrderPair(opened.store);
    await before?.(opened.store, [stored, lower]);
    await holder.query('BEGIN');
    let writing: Promise<unknown> | undefined;
    try {
      await holder.query('SELECT id FROM deliveries WHERE id = $1 FOR NO KEY UPDATE', [lower]);
      writing = write(opened.store, [stored, lower]);
      // The write is now waiting for `lower`; had it read in table order, it would hold `stored`.
      await waitUntil(() => someoneWaitsForALock(checker), 5_000, 'no write waited for the lock');
      expect(await isLocked(stored)).toBe(false);
    } finally {
      await holder.query('COMMIT');
      await writing;
    }
  });
});

/** Whether some other session of this database waits for a lock (the write under test). */
async function someoneWaitsForALock(client: pg.Client) {
  const { rows } = await client.query(
    `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return rows.length > 0;
}
