import { createBullProducer, startBullWorker } from '../queue/bullmq.js';
import type { RedisSettings } from '../queue/redisConnection.js';
import { listenForNewEvents, receiveHandoffs } from '../queue/redisHandoff.js';
import { startEngine, type EngineDeps } from './deliveryEngine.js';
import type { DeliveryJob } from './jobs.js';
import { createRedisPacer } from './redisPacer.js';

/** Delay-queue jobs handed over at once: each is only handed to the local queue. */
const HAND_OVER_CONCURRENCY = 32;

/**
 * A worker process's engine: the Redis pacer shared by all workers, BullMQ's delayed jobs for
 * deliveries that wait long, the deliveries web processes hand over, and their new-events ring.
 */
export function startWorkerEngine(deps: EngineDeps, redis: RedisSettings) {
  const { config, log } = deps;
  const delayQueue = createBullProducer<DeliveryJob>(redis, 'deliveries', { log, failFast: false });
  const engine = startEngine(deps, createRedisPacer(redis, config.DELIVERY_BUDGET_PER_HOST, log), delayQueue);
  const handOver = startBullWorker<DeliveryJob>(
    redis,
    'deliveries',
    async (job) => void engine.deliveries.add([{ id: job.deliveryId, data: job, runAt: job.dueAt, priority: job.turn }]),
    { concurrency: HAND_OVER_CONCURRENCY, lockMs: config.WORKER_LOCK_MS, log },
  );
  const handoffs = receiveHandoffs(redis, engine.handed, log);
  const rings = listenForNewEvents(redis, engine.wakeFanOut, log);
  // The worker's Redis, for its readiness gauge: the delay queue's connection (it waits for Redis, so the check has a timeout).
  deps.metrics.watchReadiness('redis', () => delayQueue.ping());
  return {
    /** Takes no new jobs, lets running deliveries finish, then closes connections. */
    async stop() {
      await Promise.all([handOver.close(), handoffs.close(), rings.close()]);
      await engine.stop();
      await delayQueue.close();
    },
  };
}
