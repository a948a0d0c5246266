import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RELAY_GRACE_MS } from '../../src/domain/delivery.js';
import { createRedisHandoff, listenForNewEvents, receiveHandoffs, type HandoffTaker } from '../../src/queue/redisHandoff.js';
import type { QueuedDelivery } from '../../src/storage/events.js';
import { freePort, redisForTest, sleep, waitUntil, withPostgresAndRedis } from '../support/processes.js';

const log = pino({ level: 'silent' });
/** Long enough for any pop still on its way to reach its taker. */
const SETTLE_MS = 300;

const deliveries = (count: number): QueuedDelivery[] =>
  Array.from({ length: count }, (_, i) => ({
    delivery_id: randomUUID(),
    account_id: `acct-${i % 3}`,
    target_url: 'https://hooks.example.com/receive',
    max_per_second: i % 2 === 0 ? null : 5,
    queued_at: new Date(Date.now() - i),
  }));

/** A worker's side that keeps what it takes, with room for `capacity` in all. */
function keeper(capacity = Number.POSITIVE_INFINITY) {
  const taken: QueuedDelivery[] = [];
  const taker: HandoffTaker = { room: () => Math.min(100, capacity - taken.length), take: (rows) => void taken.push(...rows) };
  return { taker, taken };
}

/**
 * The delivery handoff on the machine's Redis, between a web process's side and workers': each
 * delivery handed reaches one worker, whole, within what the worker has room for; one whose
 * lease ended is left to the relay; and a hand never fails its caller.
 */
describe.runIf(withPostgresAndRedis)('delivery handoff on Redis', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function web(redis = redisForTest(), leaseMs = RELAY_GRACE_MS) {
    const handoff = createRedisHandoff(redis, leaseMs, log);
    cleanups.push(redis.cleanup, handoff.close);
    return { redis, handoff };
  }
  function worker(redis: ReturnType<typeof redisForTest>, capacity?: number) {
    const { taker, taken } = keeper(capacity);
    const receiving = receiveHandoffs(redis, taker, log);
    cleanups.push(receiving.close);
    return { taken, close: receiving.close };
  }
  // The web's side fails fast until it is connected.
  const connected = (handoff: { ping(): Promise<void> }) => waitUntil(async () => (await handoff.ping().then(() => true, () => false)), 10_000, 'connected');

  it('gives each delivery handed to exactly one of the workers popping, whole and in the order handed', async () => {
    const { redis, handoff } = web();
    const workers = [worker(redis), worker(redis)];
    await connected(handoff);
    const handed = [deliveries(50), deliveries(1), deliveries(149)];
    for (const batch of handed) handoff.handOff(batch);
    const all = handed.flat();
    await waitUntil(() => workers.reduce((sum, each) => sum + each.taken.length, 0) >= all.length, 10_000, 'all taken');
    await sleep(SETTLE_MS);
    const taken = workers.flatMap((each) => each.taken);
    expect(taken).toHaveLength(all.length);
    expect(new Set(taken.map((row) => row.delivery_id)).size).toBe(all.length);
    const order = new Map(all.map((row, i) => [row.delivery_id, i]));
    for (const each of workers) {
      const positions = each.taken.map((row) => order.get(row.delivery_id)!);
      expect(positions).toStrictEqual([...positions].sort((a, b) => a - b));
    }
    const byId = new Map(all.map((row) => [row.delivery_id, row]));
    for (const row of taken) expect(row).toStrictEqual(byId.get(row.delivery_id));
  });

  it('pops no more than the worker has room for; the rest waits for a worker with room', async () => {
    const { redis, handoff } = web();
    const full = worker(redis, 5);
    await connected(handoff);
    handoff.handOff(deliveries(12));
    await waitUntil(() => full.taken.length === 5, 10_000, 'five taken');
    await sleep(SETTLE_MS);
    expect(full.taken).toHaveLength(5);
    const roomy = worker(redis);
    await waitUntil(() => roomy.taken.length === 7, 10_000, 'the other seven taken');
  });

  it('drops a delivery whose lease ended before a worker popped it: the relay sends that one', async () => {
    const LEASE_MS = 300;
    const { redis, handoff: shortLease } = web(redisForTest(), LEASE_MS);
    const { handoff } = web(redis);
    await Promise.all([connected(shortLease), connected(handoff)]);
    shortLease.handOff(deliveries(3));
    await sleep(LEASE_MS + 100);
    const onTime = deliveries(2);
    handoff.handOff(onTime);
    const popper = worker(redis);
    await waitUntil(() => popper.taken.length === onTime.length, 10_000, 'the deliveries within their lease');
    await sleep(SETTLE_MS);
    expect(popper.taken.map((row) => row.delivery_id)).toStrictEqual(onTime.map((row) => row.delivery_id));
  });

  it('never fails its caller when Redis is away, and counts no worker rather than none', async () => {
    const away = { target: { url: `redis://127.0.0.1:${await freePort()}` }, prefix: `away-${randomUUID()}` };
    const handoff = createRedisHandoff(away, RELAY_GRACE_MS, log);
    cleanups.push(handoff.close);
    expect(() => handoff.handOff(deliveries(3))).not.toThrow();
    await expect(handoff.listening()).rejects.toThrow();
    await expect(handoff.ping()).rejects.toThrow();
  });

  it('counts the workers subscribed, as they come and go', async () => {
    const { redis, handoff } = web();
    const listeners = [listenForNewEvents(redis, () => {}, log), listenForNewEvents(redis, () => {}, log)];
    cleanups.push(...listeners.map((each) => each.close));
    await waitUntil(async () => (await handoff.listening().catch(() => 0)) === 2, 10_000, 'two workers listening');
    await listeners.pop()!.close();
    await waitUntil(async () => (await handoff.listening()) === 1, 10_000, 'one worker listening');
  });
});
