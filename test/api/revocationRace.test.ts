import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { buildTestApp, newKey } from '../support/app.js';
import { openTestStore, withPostgres } from '../support/databases.js';
import { count, internalAuth, newAccount } from '../support/http.js';
import { waitUntil } from '../support/processes.js';

const ROUNDS = 5;
const SUBSCRIBES_PER_ROUND = 30;

/**
 * A revocation racing subscribes on PostgreSQL (real concurrency: a pool of connections, each
 * request's key check and its insert in separate statements). Whatever the interleaving, no
 * subscription of a revoked key may be left live, and each subscribe is answered 201 or 401.
 */
describe.runIf(withPostgres)('revocation racing subscribes on PostgreSQL', () => {
  let store: Store;
  let db: Database;
  let url: string;
  let app: FastifyInstance;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const opened = await openTestStore('postgres');
    ({ store, db, cleanup } = opened);
    url = opened.url!;
    ({ app } = await buildTestApp(store, { RATE_LIMIT_PER_MINUTE: '1000000', MAX_HOOKS_PER_KEY: '1000' }));
  });
  afterAll(async () => {
    await app?.close();
    await cleanup?.();
  });

  const subscribe = (auth: Record<string, string>, i: number) =>
    app.inject({ method: 'POST', url: '/api/v1/hooks', headers: auth, payload: { event: 'new_contact', target_url: `https://example.com/${i}` } });
  const revoke = (keyId: string) => app.inject({ method: 'DELETE', url: `/internal/v1/keys/${keyId}`, headers: internalAuth });
  const liveHooksOf = (keyId: string) => count(db, 'hooks WHERE api_key_id = $1 AND deleted_at IS NULL', [keyId]);

  it(`leaves no live hook under the revoked key, in ${ROUNDS} rounds of ${SUBSCRIBES_PER_ROUND} subscribes racing one revoke`, async () => {
    const tally = { created: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const accountId = newAccount();
      const key = await newKey(store, accountId);
      const bystander = await newKey(store, accountId);
      const kept = await subscribe(bystander.auth, -1);

      // The revoke goes out inside the burst, later in each round, so subscribes are at every stage
      // when it commits: not yet checked, checked and waiting for the key's lock, inserting, answered.
      const before = Math.round((SUBSCRIBES_PER_ROUND * (round + 1)) / (ROUNDS + 1));
      const subscribes = Array.from({ length: before }, (_, i) => subscribe(key.auth, i));
      for (let i = 0; i < round; i++) await new Promise((resolve) => setImmediate(resolve));
      const revoking = revoke(key.id);
      subscribes.push(...Array.from({ length: SUBSCRIBES_PER_ROUND - before }, (_, i) => subscribe(key.auth, before + i)));
      const revoked = await revoking;
      const statuses = (await Promise.all(subscribes)).map((response) => response.statusCode);

      expect(revoked.statusCode).toBe(200);
      expect(statuses.filter((status) => status !== 201 && status !== 401)).toStrictEqual([]);
      expect(await liveHooksOf(key.id)).toBe(0);
      // Scoped: the other key of the account keeps its subscription.
      expect(await count(db, 'hooks WHERE id = $1 AND deleted_at IS NULL', [kept.json().id])).toBe(1);
      tally.created += statuses.filter((status) => status === 201).length;
      tally.refused += statuses.filter((status) => status === 401).length;
    }
    console.info(`[revocation race] subscribes answered 201: ${tally.created}, 401: ${tally.refused}`);
  });

  it('refuses subscribes that passed the key check before a revocation that commits first', async () => {
    // Pin the order the race can take: an outside transaction holds the key row; the revoke
    // queues for it first, then subscribes whose key check has already passed queue behind it.
    const key = await newKey(store, newAccount());
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [key.id]);
      const waitingForLocks = async (n: number) =>
        (await count(db, "pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")) === n;

      const revoked = revoke(key.id);
      await waitUntil(() => waitingForLocks(1));
      const subscribes = Array.from({ length: 12 }, (_, i) => subscribe(key.auth, i));
      await waitUntil(() => waitingForLocks(13));
      await holder.query('ROLLBACK');

      expect((await revoked).statusCode).toBe(200);
      const statuses = (await Promise.all(subscribes)).map((response) => response.statusCode);
      expect(statuses.filter((status) => status !== 201 && status !== 401)).toStrictEqual([]);
      expect(statuses).toContain(401);
      expect(await liveHooksOf(key.id)).toBe(0);
    } finally {
      await holder.end();
    }
  });
});
