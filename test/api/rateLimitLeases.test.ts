import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leasedRateLimitStore } from '../../src/api/rateLimitLeases.js';
import { sleep } from '../../kit/waiting.js';
import { redisForTest, withPostgresAndRedis } from '../support/processes.js';

const MINUTE = 60_000;

/**
 * The API rate limit's store, on the machine's Redis: each store stands for one web process (its
 * own connection), taking requests from a key's shared count a lease at a time.
 */
describe.runIf(withPostgresAndRedis)('the rate limit counted in leases', () => {
  let redis: ReturnType<typeof redisForTest>;
  const clients: Array<Redis | Cluster> = [];
  let keyNo = 0;
  const newKey = () => `key-${++keyNo}`;

  /** A web process's store. */
  const processStore = (): FastifyRateLimitStore => {
    const client = redis.client();
    clients.push(client);
    const Store = leasedRateLimitStore(client, `${redis.prefix}:rate-limit:`);
    return new Store({});
  };
  const count = (store: FastifyRateLimitStore, key: string, max: number, windowMs = MINUTE) =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), windowMs, max),
    );
  const admitted = async (store: FastifyRateLimitStore, key: string, max: number, requests: number) => {
    const answers = await Promise.all(Array.from({ length: requests }, () => count(store, key, max)));
    return answers.filter((answer) => answer.current <= max).length;
  };
  /** Requests one at a time until the store refuses one; how many it let through. */
  const drain = async (store: FastifyRateLimitStore, key: string, max: number) => {
    let through = 0;
    while ((await count(store, key, max)).current <= max) through++;
    return through;
  };
  const counted = async (key: string) => Number(await clients[0]!.get(`${redis.prefix}:rate-limit:${key}`));

  beforeAll(() => {
    redis = redisForTest();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.cleanup();
  });

  it('lets exactly the limit through across processes, concurrent requests included, once each spends what it holds', async () => {
    const [a, b] = [processStore(), processStore()];
    const key = newKey();
    const LIMIT = 500;
    const [firstA, firstB] = await Promise.all([admitted(a, key, LIMIT, 400), admitted(b, key, LIMIT, 400)]);
    expect(firstA + firstB).toBeLessThanOrEqual(LIMIT);
    // Refused early by at most what the other holds: a lease is at most 1/32 of what was left.
    expect(firstA + firstB).toBeGreaterThanOrEqual(LIMIT - 2 * Math.ceil(LIMIT / 32));
    const rest = (await drain(a, key, LIMIT)) + (await drain(b, key, LIMIT));
    expect(firstA + firstB + rest).toBe(LIMIT);
    expect(await counted(key)).toBe(LIMIT);
  });

  it('refuses another process at most one lease early while one holds requests it does not use', async () => {
    const [holder, busy] = [processStore(), processStore()];
    const key = newKey();
    const LIMIT = 320;
    expect(await admitted(holder, key, LIMIT, 1)).toBe(1);
    const held = (await counted(key)) - 1;
    expect(held).toBe(LIMIT / 32 - 1);
    expect(await drain(busy, key, LIMIT)).toBe(LIMIT - held - 1);
    expect(await drain(holder, key, LIMIT)).toBe(held);
  });

  it('counts the last requests of a window one at a time, so a small limit is exact whichever process serves them', async () => {
    const stores = [processStore(), processStore()];
    const key = newKey();
    const answers = [];
    for (let i = 0; i < 14; i++) answers.push(await count(stores[i % 2]!, key, 10));
    expect(answers.map((answer) => answer.current <= 10)).toStrictEqual([...Array(10).fill(true), false, false, false, false]);
  });

  it('takes one Redis lease for many requests when the limit is far', async () => {
    const store = processStore();
    const key = newKey();
    for (let i = 0; i < 100; i++) await count(store, key, 1_000_000);
    // Two leases of 64, not a hundred counts of one.
    expect(await counted(key)).toBe(128);
  });

  it('counts a route with a limit of its own apart from the rest, under the key of its method and path', async () => {
    const store = processStore();
    const route = store.child({ routeInfo: { method: 'POST', url: '/api/v1/contacts' } } as unknown as Parameters<FastifyRateLimitStore['child']>[0]);
    const key = newKey();
    expect(await drain(route, key, 2)).toBe(2);
    expect(await drain(store, key, 3)).toBe(3);
    expect(Number(await clients[0]!.get(`${redis.prefix}:rate-limit:POST/api/v1/contacts-${key}`))).toBe(2);
  });

  it('refuses with the time left in the window, counts nothing for a refusal, and lets requests through again in the next window', async () => {
    const store = processStore();
    const key = newKey();
    const WINDOW = 400;
    for (let i = 0; i < 3; i++) expect((await count(store, key, 3, WINDOW)).current).toBeLessThanOrEqual(3);
    const refused = await count(store, key, 3, WINDOW);
    expect(refused.current).toBeGreaterThan(3);
    expect(refused.ttl).toBeGreaterThan(0);
    expect(refused.ttl).toBeLessThanOrEqual(WINDOW);
    expect(await counted(key)).toBe(3);
    await sleep(WINDOW + 50);
    expect((await count(store, key, 3, WINDOW)).current).toBe(1);
  });
});
