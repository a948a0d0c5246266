import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullProducer, startBullWorker, WAKE_EARLY_MS } from '../../src/queue/bullmq.js';
import { bullPrefix } from '../../src/queue/redisConnection.js';
import type { DelayQueue } from '../../src/queue/jobQueue.js';
import { redisForTest, waitUntil, withPostgresAndRedis } from '../support/processes.js';

type Data = { n: number };
const log = pino({ level: 'silent' });

/**
 * The delay queue: deliveries that wait long are parked in BullMQ as delayed jobs, and handed
 * back to a worker at their time, a moment early and never much late; nothing is kept once
 * handed over, so Redis holds only what still waits.
 */
describe.runIf(withPostgresAndRedis)('BullMQ delay queue', () => {
  let redis: ReturnType<typeof redisForTest>;
  let producer: DelayQueue<Data>;
  let inspect: Queue;
  let connection: ReturnType<ReturnType<typeof redisForTest>['client']>;

  beforeAll(() => {
    redis = redisForTest();
    producer = createBullProducer<Data>({ target: redis.target, prefix: redis.prefix }, 'deliveries', { log, failFast: false });
    connection = redis.client();
    inspect = new Queue('deliveries', { connection, prefix: bullPrefix(redis.prefix) });
  });
  afterAll(async () => {
    await producer?.close();
    await inspect?.close();
    connection?.disconnect();
    await redis?.cleanup();
  });

  it('keeps a job until its time, hands it over then (at most WAKE_EARLY_MS early), and keeps nothing after', async () => {
    const runAt = Date.now() + 1_500;
    await producer.add([{ id: 'later.1', data: { n: 1 }, runAt }]);
    expect(await inspect.getJobState('later.1')).toBe('delayed');
    expect(await producer.counts()).toStrictEqual({ ready: 0, waiting: 1 });

    const handed: { n: number; at: number }[] = [];
    const worker = startBullWorker<Data>({ target: redis.target, prefix: redis.prefix }, 'deliveries', async (data) => void handed.push({ ...data, at: Date.now() }), {
      concurrency: 1,
      lockMs: 5_000,
      log,
    });
    try {
      await waitUntil(() => handed.length === 1, 10_000);
      expect(handed[0]!.n).toBe(1);
      expect(handed[0]!.at).toBeGreaterThanOrEqual(runAt - WAKE_EARLY_MS - 5);
      await waitUntil(async () => (await inspect.getJobState('later.1')) === 'unknown', 5_000);
      expect(await producer.counts()).toStrictEqual({ ready: 0, waiting: 0 });
    } finally {
      await worker.close();
    }
  });
});
