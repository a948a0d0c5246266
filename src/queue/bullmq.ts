import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { createBullBoard } from '@bull-board/api';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue, Worker } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { EventJobHandler, EventQueue } from './eventQueue.js';

export const EVENTS_QUEUE = 'events';
const JOB_NAME = 'deliver-event';

/** Completed jobs stay a day (Bull Board, and job-id dedupe of a repeated enqueue); failed ones a week. */
const KEEP = { removeOnComplete: { age: 86_400, count: 100_000 }, removeOnFail: { age: 7 * 86_400 } };

export interface BullSettings {
  redisUrl: string;
  prefix: string;
}

/**
 * The web process's producer. It fails fast when Redis is away (no offline buffering, one try per
 * command), so requests never wait on Redis; the outbox keeps what could not be enqueued.
 */
export function createBullProducer({ redisUrl, prefix }: BullSettings) {
  const connection = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  connection.on('error', () => {}); // reported through failed enqueues and /readyz, not as crashes
  const queue = new Queue(EVENTS_QUEUE, { connection, prefix });
  queue.on('error', () => {});
  const eventQueue: EventQueue = {
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
      await connection.ping();
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
  return { eventQueue, queue };
}

/** Bull Board at /admin/queues; the caller puts it behind the internal token. */
export function bullBoard(queue: Queue) {
  return async (app: FastifyInstance) => {
    const serverAdapter = new FastifyAdapter();
    createBullBoard({ queues: [new BullMQAdapter(queue)], serverAdapter });
    serverAdapter.setBasePath('/admin/queues');
    await app.register(serverAdapter.registerPlugin(), { prefix: '/admin/queues' });
  };
}

/**
 * A consumer. It waits for Redis when Redis is away (retries forever). A stalled job (worker
 * killed, loop blocked) is run once more so hooks not yet claimed still get their POST; the
 * claims keep the ones already sent from being sent again.
 */
export function startBullWorker(
  { redisUrl, prefix }: BullSettings,
  handler: EventJobHandler,
  options: { concurrency: number; lockMs: number },
) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const worker = new Worker<{ eventId: string }>(EVENTS_QUEUE, (job) => handler(job.data.eventId), {
    connection,
    prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: options.lockMs,
    maxStalledCount: 1,
  });
  return { worker, connection };
}
