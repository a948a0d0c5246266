import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisNewEvents, listenForNewEvents } from '../../src/queue/redisNewEvents.js';
import { redisForTest, sleep, waitUntil, withPostgresAndRedis } from '../support/processes.js';

const log = pino({ level: 'silent' });
/** Long enough for any ring still on its way to reach the listener. */
const SETTLE_MS = 300;

/**
 * The new-events ring on the machine's Redis, between a web process's side and a worker's: how
 * notifies become publishes. A ring is only a hint (the fan-out polls every second), so the rules
 * are about cost and promptness: one ring for what one group commit fires, and never none for
 * events that committed after the last ring went out.
 */
describe.runIf(withPostgresAndRedis)('new-events ring', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function ringAndListener() {
    const redis = redisForTest();
    const web = createRedisNewEvents(redis, log);
    let rings = 0;
    const worker = listenForNewEvents(redis, () => rings++, log);
    cleanups.push(redis.cleanup, web.close, worker.close);
    // The web's side fails fast until it is connected: asked too soon, it counts as none listening.
    await waitUntil(async () => (await web.listening().catch(() => 0)) === 1, 10_000, 'the worker subscribed');
    return { web, rings: () => rings };
  }

  it('rings once for the notifies a group commit’s callers make as they resume together', async () => {
    const { web, rings } = await ringAndListener();
    // The callers of one batch resume together when it commits, each in a microtask of its own.
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const callers = Array.from({ length: 20 }, async () => {
      await committed;
      web.notify();
    });
    commit();
    await Promise.all(callers);
    await sleep(SETTLE_MS);
    expect(rings()).toBe(1);
  });

  it('rings again for notifies made after a ring went out, once however many there were', async () => {
    const { web, rings } = await ringAndListener();
    web.notify();
    // A later commit's callers, while the first ring may still be on its way.
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i++) web.notify();
    await sleep(SETTLE_MS);
    expect(rings()).toBe(2);
    // And once all is quiet, the next notify rings at once, as the first did.
    web.notify();
    await waitUntil(() => rings() === 3, 5_000, 'a third ring');
  });
});
