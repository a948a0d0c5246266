import { Queue, Worker, type JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { DelayQueue } from './jobQueue.js';
import { bullPrefix, connectRedis, type RedisSettings } from './redisConnection.js';

/** `deliveries`: deliveries waiting for a later time at their target, one job per wait. */
export const QUEUE_NAMES = ['deliveries'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

const JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  // A job only hands its delivery to a worker's local queue when its time comes; the delivery
  // log says what became of it, so a completed job is worth nothing to keep. Failed ones are
  // kept for operators, capped.
  removeOnComplete: true,
  removeOnFail: { count: 1_000 },
};

/**
 * Redis wakes a worker blocked on the delayed set on its own tick (`hz`, 10 a second by default),
 * so a delayed job comes back up to 100 ms late. Jobs are delayed this much less than asked: a
 * paced delivery then arrives a moment early and waits the rest at its gate, precisely, rather
 * than late, when its time at the target would be spent unused.
 */
export const WAKE_EARLY_MS = 100;
const delayUntil = (runAt: number) => Math.max(0, runAt - WAKE_EARLY_MS - Date.now());

/**
 * A producer. `failFast` gives up at once when Redis is away; a worker's producer waits for it.
 * It owns its connection (BullMQ leaves a connection it was given open), and closes it after the queue.
 */
export function createBullProducer<Data>(
  { target, prefix }: RedisSettings,
  name: QueueName,
  { log, failFast }: { log: Logger; failFast: boolean },
): DelayQueue<Data> {
  const connection = connectRedis(target, failFast ? 'fails-fast' : 'waits');
  const queue = new Queue<Data>(name, { connection, prefix: bullPrefix(prefix) });
  // Failed commands reject to their caller; this is the connection's own reporting.
  queue.on('error', (error) => log.warn({ err: error, queue: name }, 'queue connection problem'));
  return {
    async add(jobs) {
      if (jobs.length === 0) return;
      const bulk = jobs.map((job) => ({ name, data: job.data, opts: { ...JOB_OPTIONS, jobId: job.id, delay: delayUntil(job.runAt) } }));
      // BullMQ's typings want the job name as a literal of its NameType; ours is the queue's name.
      await queue.addBulk(bulk as never);
    },
    async counts() {
      const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      return { ready: (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.prioritized ?? 0), waiting: counts.delayed ?? 0 };
    },
    async ping() {
      await connection.ping();
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

/**
 * A consumer. It waits for Redis when Redis is away (retries forever). `take` hands a due job's
 * data over (to the worker's local queue); a job run twice (stalled) is handed over twice, and
 * the delivery's claim keeps it to one POST.
 */
export function startBullWorker<Data>(
  { target, prefix }: RedisSettings,
  name: QueueName,
  take: (data: Data) => Promise<void>,
  options: { concurrency: number; lockMs: number; log: Logger },
) {
  // Its own connection, closed after the worker; BullMQ makes the blocking one from it and closes that.
  const connection = connectRedis(target, 'waits');
  const worker = new Worker<Data>(name, async (job) => take(job.data), {
    connection,
    prefix: bullPrefix(prefix),
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: options.lockMs,
    maxStalledCount: 1,
  });
  worker.on('error', (error) => options.log.warn({ err: error, queue: name }, 'worker connection problem; waiting for Redis'));
  worker.on('failed', (job, error) =>
    options.log.error({ err: error, queue: name, jobId: job?.id }, 'job failed; the outbox relay restores its delivery when it is overdue'),
  );
  return {
    /** Takes no new jobs and waits for the running ones. */
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
