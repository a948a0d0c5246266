import type { DeliveryJobData, DeliveryReport } from '../domain/delivery.js';
import type { FiredEvent } from '../domain/events.js';
import { createBullQueue, startBullConsumer, type KeptJobs } from '../queue/bullmq.js';
import type { RedisSettings } from '../queue/redisConnection.js';
import { createEngine, type EngineDeps } from './deliveryEngine.js';
import type { EventJobResult } from './eventJob.js';
import { createRedisPacer } from './redisPacer.js';
import { startRelay } from './relay.js';

/**
 * A worker process's engine: it consumes both BullMQ queues (a job per fired event, a job per
 * parked or relayed delivery) with the engine's handlers, paces through Redis with every other
 * worker, parks long waits in the `deliveries` queue, and relays what the queues lost.
 */
export function startWorkerEngine(deps: EngineDeps, redis: RedisSettings, kept: KeptJobs) {
  const { config, log } = deps;
  const producer = { log, failFast: false, kept };
  const events = createBullQueue<FiredEvent>(redis, 'events', producer);
  const deliveries = createBullQueue<DeliveryJobData>(redis, 'deliveries', producer);
  const engine = createEngine(deps, createRedisPacer(redis, config.DELIVERY_BUDGET_PER_HOST, log), { queue: deliveries, keepsDelayedJobs: true });
  const consumer = { concurrency: engine.jobConcurrency, lockMs: config.WORKER_LOCK_MS, kept, log };
  const consumers = [
    startBullConsumer<FiredEvent, EventJobResult>(redis, 'events', engine.handlers.events, consumer),
    startBullConsumer<DeliveryJobData, DeliveryReport>(redis, 'deliveries', engine.handlers.deliveries, consumer),
  ];
  const relay = startRelay(deps.store, { events, deliveries }, log, config.DELIVERY_MAX_WAIT, deps.metrics);
  deps.metrics.watchQueues({ line: engine.line, queues: { events, deliveries } });
  // The worker's Redis, for its readiness gauge (its connection waits for Redis, so the check has a timeout).
  deps.metrics.watchReadiness('redis', () => deliveries.ping());
  return {
    /** Takes no new jobs, leaves waiting deliveries to the relay, lets running ones finish, then closes connections. */
    async stop() {
      await relay.stop();
      await Promise.all([...consumers.map((consumer) => consumer.close()), engine.stop()]);
      await Promise.all([events.close(), deliveries.close()]);
    },
  };
}
