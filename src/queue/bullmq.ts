import { DelayedError, Queue, Worker, type JobsOptions } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { JobHandler, JobQueue } from './jobQueue.js';

/** `events`: one fan-out job per event; `deliveries`: one job per (event, subscription). */
export const QUEUE_NAMES = ['events', 'deliveries'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/**
 * What Redis keeps for operators (Bull Board): the latest completed jobs and the latest failed
 * ones, both capped. A kept job blocks re-adding its id, which is why the relay uses restore().
 */
const JOB_OPTIONS: JobsOptions = {
  // One run per job: recovery comes from the outbox relay and from retrying inside the job
  // before its claim, never from re-running a job that may have sent.
  attempts: 1,
  removeOnComplete: { age: 3_600, count: 1_000 },
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

/** BullMQ takes priorities up to 2^21 - 1; further back than that is still the back of the line. */
const LOWEST_PRIORITY = 2 ** 21 - 1;
const bullPriority = (priority: number) => Math.min(Math.max(1, Math.round(priority)), LOWEST_PRIORITY);

export interface BullSettings {
  redisUrl: string;
  prefix: string;
}

/**
 * Connection options rather than a shared client, so BullMQ owns each connection and closes it
 * cleanly with its queue or worker.
 */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || 6379),
    username: decodeURIComponent(parsed.username) || undefined,
    password: decodeURIComponent(parsed.password) || undefined,
    db: Number(parsed.pathname.slice(1) || 0),
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
  };
}

/**
 * A producer. `failFast` (the web process) gives up at once when Redis is away, so requests
 * never wait on Redis: the outbox keeps what could not be enqueued. A worker's producer waits.
 */
export function createBullProducer<Data>(
  { redisUrl, prefix }: BullSettings,
  name: QueueName,
  { log, failFast }: { log: Logger; failFast: boolean },
): JobQueue<Data> {
  const connection = failFast
    ? { ...redisOptions(redisUrl), enableOfflineQueue: false, maxRetriesPerRequest: 1 }
    : { ...redisOptions(redisUrl), maxRetriesPerRequest: null };
  const queue = new Queue<Data>(name, { connection, prefix });
  // Failed commands reject to their caller; this is the connection's own reporting.
  queue.on('error', (error) => log.warn({ err: error, queue: name }, 'queue connection problem'));
  const toBulk = (jobs: Parameters<JobQueue<Data>['add']>[0]) =>
    jobs.map((job) => ({
      name,
      data: job.data,
      opts: { ...JOB_OPTIONS, jobId: job.id, delay: job.runAt === undefined ? undefined : delayUntil(job.runAt), priority: job.priority === undefined ? undefined : bullPriority(job.priority) },
    }));
  return {
    async add(jobs) {
      // BullMQ's typings want the job name as a literal of its NameType; ours is the queue's name.
      if (jobs.length > 0) await queue.addBulk(toBulk(jobs) as never);
    },
    async restore(jobs) {
      const states = await Promise.all(jobs.map((job) => queue.getJobState(job.id)));
      const finished = (i: number) => states[i] === 'completed' || states[i] === 'failed';
      // A finished job kept for operators still holds its id; remove it so the id can be added again.
      await Promise.all(jobs.map((job, i) => (finished(i) ? queue.remove(job.id) : undefined)));
      const missing = jobs.filter((_, i) => finished(i) || states[i] === 'unknown');
      if (missing.length > 0) await queue.addBulk(toBulk(missing) as never);
      return missing.length;
    },
    async counts() {
      const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      return { ready: (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.prioritized ?? 0), waiting: counts.delayed ?? 0 };
    },
    async ping() {
      await ((await queue.client) as unknown as Redis).ping();
    },
    close: () => queue.close(),
  };
}

/**
 * A consumer. It waits for Redis when Redis is away (retries forever). A stalled job (worker
 * killed, loop blocked) is run once more, so work not yet claimed still happens; the claims keep
 * what was already sent from being sent again. A job that answers "not yet" moves to delayed and
 * holds no worker slot while it waits.
 */
export function startBullWorker<Data>(
  { redisUrl, prefix }: BullSettings,
  name: QueueName,
  handler: JobHandler<Data>,
  options: { concurrency: number; lockMs: number; log: Logger },
) {
  const closing = new AbortController();
  const worker = new Worker<Data>(
    name,
    async (job, token) => {
      const result = await handler(job.data, closing.signal);
      if (!result) return;
      await job.updateData(result.data);
      // Set on the running job, the priority is the one it takes in line when its delay ends.
      if (result.priority !== undefined) await job.changePriority({ priority: bullPriority(result.priority) });
      await job.moveToDelayed(Date.now() + delayUntil(result.runAt), token);
      throw new DelayedError();
    },
    {
      connection: { ...redisOptions(redisUrl), maxRetriesPerRequest: null },
      prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: options.lockMs,
      maxStalledCount: 1,
    },
  );
  worker.on('error', (error) => options.log.warn({ err: error, queue: name }, 'worker connection problem; waiting for Redis'));
  worker.on('failed', (job, error) =>
    options.log.error({ err: error, queue: name, jobId: job?.id }, 'job failed; the outbox relay restores it if its work is not done'),
  );
  return {
    /** Stops retry loops, takes no new jobs, and waits for the running ones. */
    async close() {
      closing.abort();
      await worker.close();
    },
  };
}
