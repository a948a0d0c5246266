import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { buildTestApp, INTERNAL_TOKEN, newKey } from '../support/app.js';
import { client } from '../support/client.js';
import { createPostgresDatabase, openTestStore, withPostgres } from '../support/databases.js';
import { count, internalAuth, newAccount } from '../support/http.js';
import { sleep, startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

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
      const waitingForLocks = async (n: number) => (await count(db, "pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")) === n;

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

/**
 * The same race over HTTP against a real web process on PostgreSQL that delivers (embedded
 * engine, no Redis): after each round an event fires for the account, and none of the revoked
 * key's subscriptions, whenever they were made, receives a POST; the other key's does.
 */
describe.runIf(withPostgres)('revocation racing subscribes, then an event, on a real server', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let receiver: Receiver;
  let web: Awaited<ReturnType<typeof startWeb>>;
  let observer: pg.Client;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    receiver = await startReceiver();
    web = await startWeb({
      DATABASE_URL: database.url,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_HOOKS_PER_KEY: '1000',
    });
  });
  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    await observer?.end();
    await database?.drop();
  });

  it(`sends nothing to any subscription of the revoked key, in ${ROUNDS} rounds`, async () => {
    const http = client(web.url);
    const tally = { created: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const accountId = `race-${round}`;
      const issued = await http.call('POST', `/internal/v1/accounts/${accountId}/keys`, INTERNAL_TOKEN, {});
      const racing = http.api(issued.body.key);
      const bystander = http.api(await http.newKey(accountId));
      expect((await bystander('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/kept/${round}` })).status).toBe(201);

      const subscribe = (i: number) => racing('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/revoked/${round}/${i}` });
      const before = Math.round((SUBSCRIBES_PER_ROUND * (round + 1)) / (ROUNDS + 1));
      const subscribes = Array.from({ length: before }, (_, i) => subscribe(i));
      const revoked = http.internal('DELETE', `/keys/${issued.body.id}`);
      subscribes.push(...Array.from({ length: SUBSCRIBES_PER_ROUND - before }, (_, i) => subscribe(before + i)));
      expect((await revoked).status).toBe(200);
      const statuses = (await Promise.all(subscribes)).map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 201 && status !== 401)).toStrictEqual([]);
      tally.created += statuses.filter((status) => status === 201).length;
      tally.refused += statuses.filter((status) => status === 401).length;
      const live = await observer.query('SELECT count(*)::int AS n FROM hooks WHERE api_key_id = $1 AND deleted_at IS NULL', [issued.body.id]);
      expect(live.rows[0].n).toBe(0);

      expect((await bystander('POST', '/contacts', { phone: `+1415555${String(round).padStart(4, '0')}` })).body.action).toBe('inserted');
      await waitUntil(() => receiver.requests.some((request) => request.path === `/kept/${round}`), 15_000);
    }
    await sleep(500); // room for any wrong POST to land
    expect(receiver.requests.filter((request) => request.path.startsWith('/revoked/')).map((request) => request.path)).toStrictEqual([]);
    console.info(`[revocation race, real server] subscribes answered 201: ${tally.created}, 401: ${tally.refused}`);
  });
});
