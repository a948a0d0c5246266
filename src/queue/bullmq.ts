import { Queue, Worker } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import type { EventJobHandler, EventQueue } from './eventQueue.js';

export const EVENTS_QUEUE = 'events';
/** Every queue the service uses, as operators see them (Bull Board). */
export const QUEUE_NAMES = [EVENTS_QUEUE] as const;
const JOB_NAME = 'deliver-event';

/**
 * What Redis keeps for operators (Bull Board): the latest completed jobs, failed ones for a week.
 * Kept jobs also make a repeated enqueue a no-op, but the delivery claims are what dedupe.
 */
const KEEP = { removeOnComplete: { age: 3_600, count: 1_000 }, removeOnFail: { age: 7 * 86_400 } };

export interface BullSettings {
  redisUrl: string;
  prefix: string;
}

/**
 * The web process's producer. It fails fast when Redis is away (no offline buffering, one try per
 * command), so requests never wait on Redis; the outbox keeps what could not be enqueued.
 */
export function createBullProducer({ redisUrl, prefix }: BullSettings) {
  const queue = new Queue(EVENTS_QUEUE, {
    connection: { ...redisOptions(redisUrl), enableOfflineQueue: false, maxRetriesPerRequest: 1 },
    prefix,
  });
  queue.on('error', () => {}); // reported through failed enqueues and /readyz, not as crashes
  const producer: EventQueue = {
    async enqueue(eventIds) {
      await queue.addBulk(
        eventIds.map((eventId) => ({ name: JOB_NAME, data: { eventId }, opts: { jobId: eventId, attempts: 1, ...KEEP } })),
      );
    },
    async depth() {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    },
    async ping() {
      await ((await queue.client) as unknown as Redis).ping();
    },
    close: () => queue.close(),
  };
  return producer;
}

/**
 * A consumer. It waits for Redis when Redis is away (retries forever). A stalled job (worker
 * killed, loop blocked) is run once more so hooks not yet claimed still get their POST; the
 * claims keep the ones already sent from being sent again.
 */
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

export function startBullWorker(
  { redisUrl, prefix }: BullSettings,
  handler: EventJobHandler,
  options: { concurrency: number; lockMs: number },
) {
  const worker = new Worker<{ eventId: string }>(EVENTS_QUEUE, (job) => handler(job.data.eventId), {
    connection: { ...redisOptions(redisUrl), maxRetriesPerRequest: null },
    prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: options.lockMs,
    maxStalledCount: 1,
  });
  return worker;
}
