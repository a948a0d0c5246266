import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullQueue, startBullConsumer, WAKE_EARLY_MS, type KeptJobs } from '../../src/queue/bullmq.js';
import { createInProcessQueue } from '../../src/queue/inProcessQueue.js';
import type { JobHandler } from '../../src/queue/jobQueue.js';
import { bullPrefix } from '../../src/queue/redisConnection.js';
import { redisForTest, sleep, waitUntil, withPostgresAndRedis } from '../support/processes.js';

type Data = { n: number };
const log = pino({ level: 'silent' });
const kept: KeptJobs = { completedMs: 3_600_000, completedCount: 3, failedMs: 3_600_000 };

/**
 * The BullMQ backend of the two queues: each job runs once (attempts 1), at its time and never
 * much after; its return value and a failure's reason are kept for operators, finished jobs only
 * as many as JOBS_KEEP_COMPLETED_COUNT; a job id already held adds nothing; and the relay's
 * `again` runs a kept failed job again.
 */
describe.runIf(withPostgresAndRedis)('BullMQ queues', () => {
  const closing: Array<() => Promise<unknown>> = [];

  /**
   * A producer of `deliveries` and a consumer running `handler`, on a Redis namespace of their own
   * (each test's jobs meet only its own consumer), and a plain BullMQ queue to look at the jobs.
   */
  const queueWith = (handler: JobHandler<Data, unknown>) => {
    const redis = redisForTest();
    const settings = { target: redis.target, prefix: redis.prefix };
    const queue = createBullQueue<Data>(settings, 'deliveries', { log, failFast: false, kept });
    const consumer = startBullConsumer<Data, unknown>(settings, 'deliveries', handler, { concurrency: 4, lockMs: 5_000, kept, log });
    const connection = redis.client();
    const inspect = new Queue('deliveries', { connection, prefix: bullPrefix(redis.prefix) });
    closing.push(
      () => consumer.close(),
      () => queue.close(),
      () => inspect.close(),
      async () => connection.disconnect(),
      () => redis.cleanup(),
    );
    return { queue, inspect };
  };

  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('runs a delayed job at its time (at most WAKE_EARLY_MS early) once, keeps its return value, and adds nothing for an id it holds', async () => {
    const ran: { n: number; at: number }[] = [];
    const { queue, inspect } = queueWith(async (data) => {
      ran.push({ ...data, at: Date.now() });
      return { doubled: data.n * 2 };
    });
    const runAt = Date.now() + 1_500;
    await queue.add([{ id: 'later.1', name: 'paced', data: { n: 1 }, runAt }]);
    await queue.add([{ id: 'later.1', name: 'paced', data: { n: 99 }, runAt }]);
    expect(await inspect.getJobState('later.1')).toBe('delayed');
    expect((await queue.counts()).delayed).toBe(1);
    await waitUntil(async () => (await inspect.getJobState('later.1')) === 'completed', 10_000);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.n).toBe(1);
    expect(ran[0]!.at).toBeGreaterThanOrEqual(runAt - WAKE_EARLY_MS - 5);
    const job = await inspect.getJob('later.1');
    expect({ name: job?.name, returnvalue: job?.returnvalue, attempts: job?.opts.attempts }).toStrictEqual({
      name: 'paced',
      returnvalue: { doubled: 2 },
      attempts: 1,
    });
    // Kept completed, its id adds nothing again.
    await queue.add([{ id: 'later.1', name: 'paced', data: { n: 5 } }]);
    await sleep(500);
    expect(ran).toHaveLength(1);
  });

  it('fails a job whose handler throws, with its reason, never retries it, and runs it again when the relay adds it again', async () => {
    let runs = 0;
    const { queue, inspect } = queueWith(async () => {
      runs++;
      if (runs === 1) throw new Error('fan-out could not be written');
      return 'done';
    });
    await queue.add([{ id: 'fails-once', name: 'new_contact', data: { n: 1 } }]);
    await waitUntil(async () => (await inspect.getJobState('fails-once')) === 'failed', 10_000);
    expect((await inspect.getJob('fails-once'))?.failedReason).toBe('fan-out could not be written');
    await queue.add([{ id: 'fails-once', name: 'new_contact', data: { n: 1 } }]);
    await sleep(500);
    expect(runs).toBe(1);
    expect((await queue.counts()).failed).toBe(1);

    await queue.add([{ id: 'fails-once', name: 'new_contact', data: { n: 1 } }], { again: true });
    await waitUntil(async () => (await inspect.getJobState('fails-once')) === 'completed', 10_000);
    expect(runs).toBe(2);
    expect((await inspect.getJob('fails-once'))?.returnvalue).toBe('done');
  });

  it('runs waiting jobs by priority, those without one first, then in arrival order within one', async () => {
    const ran: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const redis = redisForTest();
    const settings = { target: redis.target, prefix: redis.prefix };
    const queue = createBullQueue<Data>(settings, 'events', { log, failFast: false, kept });
    // One at a time, and the first holds the worker until every other job waits.
    const consumer = startBullConsumer<Data, void>(
      settings,
      'events',
      async ({ n }) => {
        ran.push(n);
        if (n === 0) await held;
      },
      { concurrency: 1, lockMs: 5_000, kept, log },
    );
    closing.push(
      () => consumer.close(),
      () => queue.close(),
      () => redis.cleanup(),
    );
    await queue.add([{ id: 'first', name: 'x', data: { n: 0 } }]);
    await waitUntil(() => ran.length === 1, 10_000);
    await queue.add([
      { id: 'p3', name: 'x', data: { n: 3 }, priority: 3 },
      { id: 'p1a', name: 'x', data: { n: 11 }, priority: 1 },
      { id: 'none', name: 'x', data: { n: 99 } },
      { id: 'p1b', name: 'x', data: { n: 12 }, priority: 1 },
    ]);
    release();
    await waitUntil(() => ran.length === 5, 10_000);
    expect(ran).toStrictEqual([0, 99, 11, 12, 3]);
  });

  it('keeps no more completed jobs than JOBS_KEEP_COMPLETED_COUNT', async () => {
    const { queue, inspect } = queueWith(async (data) => data.n);
    for (let n = 0; n < 6; n++) await queue.add([{ id: `kept.${n}`, name: 'paced', data: { n } }]);
    await waitUntil(async () => (await inspect.getJobState('kept.5')) === 'completed', 10_000);
    expect((await queue.counts()).completed).toBeLessThanOrEqual(kept.completedCount);
  });
});

/**
 * The embedded mode's stand-in: the same handler contract in the one process, `concurrency` at
 * once, delayed jobs on timers, no more held than its capacity, a held id adding nothing.
 */
describe('the in-process queue', () => {
  it('runs jobs at their time, `concurrency` at once, each id once while held, and holds no more than its capacity', async () => {
    let running = 0;
    let most = 0;
    const ran: number[] = [];
    const queue = createInProcessQueue<Data, void>(
      'events',
      async ({ n }) => {
        most = Math.max(most, ++running);
        await sleep(50);
        ran.push(n);
        running--;
      },
      { concurrency: 2, capacity: 5, log },
    );
    const runAt = Date.now() + 300;
    await queue.add([{ id: 'late', name: 'x', data: { n: 0 }, runAt }]);
    await queue.add([1, 2, 3, 4, 4, 5, 6].map((n) => ({ id: `n${n}`, name: 'x', data: { n } })));
    expect(queue.room()).toBe(0);
    await waitUntil(() => ran.length === 5, 5_000);
    expect(ran.sort()).toStrictEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(await queue.counts()).toStrictEqual({ waiting: 0, active: 0, delayed: 0, completed: 5, failed: 0 });
    await queue.close();
  });

  it('runs waiting jobs by priority, those without one first, as BullMQ does', async () => {
    const ran: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const queue = createInProcessQueue<Data, void>(
      'events',
      async ({ n }) => {
        ran.push(n);
        if (n === 0) await held;
      },
      { concurrency: 1, capacity: 10, log },
    );
    await queue.add([{ id: 'first', name: 'x', data: { n: 0 } }]);
    await queue.add([
      { id: 'p3', name: 'x', data: { n: 3 }, priority: 3 },
      { id: 'p1a', name: 'x', data: { n: 11 }, priority: 1 },
      { id: 'none', name: 'x', data: { n: 99 } },
      { id: 'p1b', name: 'x', data: { n: 12 }, priority: 1 },
    ]);
    release();
    await waitUntil(() => ran.length === 5, 5_000);
    expect(ran).toStrictEqual([0, 99, 11, 12, 3]);
    await queue.close();
  });
});
