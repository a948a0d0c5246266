import { Queue, Worker } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullProducer, redisOptions } from '../../src/queue/bullmq.js';
import type { JobQueue } from '../../src/queue/jobQueue.js';
import { redisForTest, waitUntil, withPostgresAndRedis } from '../support/processes.js';

type Data = { n: number };

/**
 * The outbox relay's way back into BullMQ: restore() re-adds a job whose id is held by a kept
 * failed or completed job (which would make a plain add a silent no-op for as long as Redis keeps
 * it), and leaves alone a job that is still pending, such as a delivery waiting for its slot.
 */
describe.runIf(withPostgresAndRedis)('BullMQ producer restore()', () => {
  let redis: ReturnType<typeof redisForTest>;
  let producer: JobQueue<Data>;
  let inspect: Queue;

  beforeAll(() => {
    redis = redisForTest();
    producer = createBullProducer<Data>({ redisUrl: redis.url, prefix: redis.prefix }, 'deliveries', { log: pino({ level: 'silent' }), failFast: false });
    inspect = new Queue('deliveries', { connection: redisOptions(redis.url), prefix: redis.prefix });
  });
  afterAll(async () => {
    await producer?.close();
    await inspect?.close();
    await redis?.cleanup();
  });

  /** Runs the queue's waiting jobs through `process` until `id` has finished. */
  async function runJob(id: string, process: () => Promise<void>) {
    const worker = new Worker('deliveries', process, { connection: { ...redisOptions(redis.url), maxRetriesPerRequest: null }, prefix: redis.prefix });
    try {
      await waitUntil(async () => ['completed', 'failed'].includes(await inspect.getJobState(id)), 10_000);
    } finally {
      await worker.close();
    }
  }

  it('re-adds a job whose id a kept failed job holds, where add() is a no-op', async () => {
    await producer.add([{ id: 'failed-once', data: { n: 1 } }]);
    await runJob('failed-once', async () => {
      throw new Error('the database was away');
    });
    expect(await inspect.getJobState('failed-once')).toBe('failed');
    await producer.add([{ id: 'failed-once', data: { n: 2 } }]);
    expect(await inspect.getJobState('failed-once')).toBe('failed');

    expect(await producer.restore([{ id: 'failed-once', data: { n: 3 } }])).toBe(1);
    expect(await inspect.getJobState('failed-once')).toBe('waiting');
    expect((await inspect.getJob('failed-once'))?.data).toStrictEqual({ n: 3 });
  });

  it('re-adds a job whose id a kept completed job holds', async () => {
    await producer.add([{ id: 'done-once', data: { n: 1 } }]);
    await runJob('done-once', async () => {});
    expect(await producer.restore([{ id: 'done-once', data: { n: 2 } }])).toBe(1);
    expect(await inspect.getJobState('done-once')).toBe('waiting');
  });

  it('adds a job Redis lost, and leaves pending ones (waiting, or delayed for their slot) alone', async () => {
    await producer.add([
      { id: 'pending-now', data: { n: 1 } },
      { id: 'pending-later', data: { n: 1 }, runAt: Date.now() + 60_000 },
    ]);
    expect(await inspect.getJobState('pending-later')).toBe('delayed');
    const restored = await producer.restore([
      { id: 'pending-now', data: { n: 2 } },
      { id: 'pending-later', data: { n: 2 } },
      { id: 'lost', data: { n: 2 } },
    ]);
    expect(restored).toBe(1);
    expect(await inspect.getJobState('lost')).toBe('waiting');
    expect((await inspect.getJob('pending-later'))?.data).toStrictEqual({ n: 1 });
    expect(await producer.counts()).toMatchObject({ waiting: 1 });
  });
});
