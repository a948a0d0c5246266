import { Queue, Worker, type JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import { JOB_STATES, LOWEST_PRIORITY, type JobCounts, type JobHandler, type JobQueue, type QueueName } from './jobQueue.js';
import { bullPrefix, connectRedis, whenReady, type RedisSettings } from './redisConnection.js';

/** How long finished jobs stay for operators to read (JOBS_KEEP_*), in BullMQ's terms. */
export interface KeptJobs {
  completedMs: number;
  completedCount: number;
  failedMs: number;
}

/**
 * Every job runs once (attempts 1: a delivery is never retried); finished ones are kept for a
 * bounded time, failed ones longer, so an operator can still read what went wrong.
 */
const jobOptions = (kept: KeptJobs) =>
  ({
    attempts: 1,
    removeOnComplete: { age: Math.ceil(kept.completedMs / 1000), count: kept.completedCount },
    removeOnFail: { age: Math.ceil(kept.failedMs / 1000) },
  }) satisfies JobsOptions;

/**
 * Redis wakes a worker blocked on the delayed set on its own tick (`hz`, 10 a second by default),
 * so a delayed job comes back up to 100 ms late. Jobs are delayed this much less than asked: a
 * paced delivery then arrives a moment early and waits the rest in its process, precisely,
 * rather than late, when its time at the target would be spent unused.
 */
export const WAKE_EARLY_MS = 100;
const delayUntil = (runAt: number | undefined) => (runAt === undefined ? 0 : Math.max(0, runAt - WAKE_EARLY_MS - Date.now()));

/**
 * A producer of one queue. `failFast` gives up at once when Redis is away (the web's request
 * path); otherwise it waits for Redis (a worker's). It owns its connection, which BullMQ leaves
 * open, and closes it after the queue.
 */
export function createBullQueue<Data>(
  { target, prefix }: RedisSettings,
  name: QueueName,
  { log, failFast, kept }: { log: Logger; failFast: boolean; kept: KeptJobs },
): JobQueue<Data> & { workers(): Promise<number>; connected(withinMs: number): Promise<boolean> } {
  const connection = connectRedis(target, failFast ? 'fails-fast' : 'waits');
  const queue = new Queue<Data>(name, { connection, prefix: bullPrefix(prefix), defaultJobOptions: jobOptions(kept) });
  // Failed commands reject to their caller; this is the connection's own reporting.
  queue.on('error', (error) => log.warn({ err: error, queue: name }, 'queue connection problem'));

  /** Jobs the relay adds again: one kept as failed blocks its id, so it is retried instead. */
  const retryFailed = async (ids: string[]) => {
    const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
    const failed = ids.filter((_, i) => states[i] === 'failed');
    const jobs = await Promise.all(failed.map((id) => queue.getJob(id)));
    await Promise.all(jobs.map((job) => job?.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })));
  };

  return {
    async add(jobs, options) {
      if (jobs.length === 0) return;
      // BullMQ's typings want the job name as a literal of its NameType.
      const opts = (job: (typeof jobs)[number]) => ({
        jobId: job.id,
        delay: delayUntil(job.runAt),
        ...(job.priority !== undefined && { priority: Math.min(LOWEST_PRIORITY, Math.max(1, job.priority)) }),
      });
      await queue.addBulk(jobs.map((job) => ({ name: job.name, data: job.data, opts: opts(job) })) as never);
      if (options?.again) await retryFailed(jobs.map((job) => job.id));
    },
    async counts() {
      const counts = await queue.getJobCounts('prioritized', ...JOB_STATES);
      const read = Object.fromEntries(JOB_STATES.map((state) => [state, counts[state] ?? 0])) as JobCounts;
      return { ...read, waiting: read.waiting + (counts.prioritized ?? 0) };
    },
    /** Worker processes consuming the queue: BullMQ names each worker's connection to Redis. */
    workers: () => queue.getWorkersCount(),
    /** Whether its connection is ready, waiting `withinMs` at most. */
    connected: (withinMs) => whenReady(connection, withinMs),
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
 * How long a consumer waits to fetch again after a command failed (BullMQ's `runRetryDelay`,
 * 15 s by default). Its connection already waits for Redis, so what fails is the moment Redis
 * comes back (a cluster not yet ok, a job Redis lost before its completion was written): with
 * the default, a worker sat idle for 15 to 30 s after every outage, while the relay re-added
 * what Redis had lost and nothing ran it.
 */
const FETCH_RETRY_MS = 1_000;

/**
 * A consumer of one queue: runs `handler` on `concurrency` jobs at once, and waits for Redis
 * when Redis is away. A job whose worker stopped answering (killed) is counted stalled after
 * `lockMs` and runs again on another worker: the handlers allow that (the fan-out is done once,
 * and a delivery's claim keeps it to one POST).
 */
export function startBullConsumer<Data, Result>(
  { target, prefix }: RedisSettings,
  name: QueueName,
  handler: JobHandler<Data, Result>,
  options: { concurrency: number; lockMs: number; kept: KeptJobs; log: Logger },
) {
  // Its own connection, closed after the worker; BullMQ makes the blocking one from it and closes that.
  const connection = connectRedis(target, 'waits');
  const { removeOnComplete, removeOnFail } = jobOptions(options.kept);
  const worker = new Worker<Data, Result>(
    name,
    (job) =>
      handler(job.data, {
        id: job.id!,
        name: job.name,
        reportProgress: (progress) =>
          void job.updateProgress(progress).catch((error: unknown) => options.log.debug({ err: error, queue: name, jobId: job.id }, 'progress not reported')),
      }),
    {
      connection,
      prefix: bullPrefix(prefix),
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: options.lockMs,
      maxStalledCount: 1,
      runRetryDelay: FETCH_RETRY_MS,
      removeOnComplete,
      removeOnFail,
    },
  );
  worker.on('error', (error) => options.log.warn({ err: error, queue: name }, 'worker connection problem; waiting for Redis'));
  worker.on('failed', (job, error) =>
    options.log.error({ err: error, queue: name, jobId: job?.id }, 'job failed; the relay adds its work again when it is overdue'),
  );
  return {
    /** Takes no new jobs and waits for the running ones. */
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
