import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import { createBullProducer, startBullWorker } from '../queue/bullmq.js';
import { createEmbeddedQueue } from '../queue/embeddedQueue.js';
import type { JobQueue } from '../queue/jobQueue.js';
import { listenCertificateFingerprints } from '../storage/listenCertificates.js';
import type { Store } from '../storage/store.js';
import { createDeliverer } from './deliver.js';
import { createFanOut } from './fanOut.js';
import { createInFlightLimits, defaultInFlightLimits } from './inFlight.js';
import type { DeliveryJob, EventJob } from './jobs.js';
import { startOutboxRelay } from './outboxRelay.js';
import type { PaceSettings } from './pace.js';
import { createLocalPacer, type Pacer } from './pacer.js';
import { createPoster } from './poster.js';
import { createRedisPacer } from './redisPacer.js';

/** Fan-out is a few queries per event; this many at once keep the database busy enough. */
const FAN_OUT_CONCURRENCY = 8;

export interface EngineDeps {
  config: Config;
  store: Store;
  metrics: Metrics;
  log: Logger;
}

/** The delivery handler and what it sends with, as both modes build it around their pacer. */
function createDelivery({ config, store, metrics, log }: EngineDeps, pacer: Pacer) {
  const settings: PaceSettings = { ratePerTarget: config.DELIVERY_RATE_PER_TARGET, maxWaitMs: config.DELIVERY_MAX_WAIT };
  const poster = createPoster({
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    allowPrivateNetworks: config.DELIVERY_ALLOW_PRIVATE_NETWORKS,
    dns: { timeoutMs: config.DELIVERY_DNS_TIMEOUT_MS, servers: config.DELIVERY_DNS_SERVERS },
    trustedCertificates: () => listenCertificateFingerprints(config.DATA_DIR),
  });
  const defaults = defaultInFlightLimits(config.DELIVERY_CONCURRENCY);
  const inFlight = createInFlightLimits({
    perTarget: config.DELIVERY_MAX_IN_FLIGHT_PER_TARGET ?? defaults.perTarget,
    perAccount: config.DELIVERY_MAX_IN_FLIGHT_PER_ACCOUNT ?? defaults.perAccount,
    perHost: config.DELIVERY_MAX_IN_FLIGHT_PER_HOST ?? defaults.perHost,
  });
  const deliver = createDeliverer({ store, pacer, poster, inFlight, settings, metrics, log, secretsKey: config.SECRETS_KEY });
  const fanOutTo = (deliveries: JobQueue<DeliveryJob>) => createFanOut({ store, pacer, deliveries, settings, metrics, log });
  return { deliver, fanOutTo, poster };
}

/**
 * The embedded mode's engine, inside the web process: in-process queues and pacer, the same
 * handlers and relay as the workers. Returns the events queue the services produce to.
 */
export function startEmbeddedEngine(deps: EngineDeps) {
  const { config, store, metrics, log } = deps;
  const pacer = createLocalPacer(config.DELIVERY_BUDGET_PER_HOST);
  const delivery = createDelivery(deps, pacer);
  const queueOptions = { capacity: config.EMBEDDED_QUEUE_CAPACITY, log };
  const deliveries = createEmbeddedQueue(delivery.deliver, { ...queueOptions, concurrency: config.DELIVERY_CONCURRENCY, name: 'deliveries' });
  const events: JobQueue<EventJob> = createEmbeddedQueue(delivery.fanOutTo(deliveries), {
    ...queueOptions,
    concurrency: FAN_OUT_CONCURRENCY,
    name: 'events',
  });
  metrics.watchQueues({ events, deliveries });
  const relay = startOutboxRelay(store, { events, deliveries }, log);
  return {
    events,
    /** Stops taking work and lets running deliveries finish. */
    async stop() {
      await relay.stop();
      await events.close();
      await deliveries.close();
      await delivery.poster.close();
    },
  };
}

/**
 * A worker process's engine: BullMQ consumers of both queues, the Redis pacer shared by all
 * workers, and the outbox relay (every worker runs one; restoring is idempotent).
 */
export function startWorkerEngine(deps: EngineDeps, redis: { redisUrl: string; prefix: string }) {
  const { config, store, metrics, log } = deps;
  const pacer = createRedisPacer(redis, config.DELIVERY_BUDGET_PER_HOST, log);
  const delivery = createDelivery(deps, pacer);
  const deliveries = createBullProducer<DeliveryJob>(redis, 'deliveries', { log, failFast: false });
  const events = createBullProducer<EventJob>(redis, 'events', { log, failFast: false });
  const consumerOptions = { lockMs: config.WORKER_LOCK_MS, log };
  const consumers = [
    startBullWorker(redis, 'deliveries', delivery.deliver, { ...consumerOptions, concurrency: config.DELIVERY_CONCURRENCY }),
    startBullWorker(redis, 'events', delivery.fanOutTo(deliveries), { ...consumerOptions, concurrency: FAN_OUT_CONCURRENCY }),
  ];
  metrics.watchQueues({ events, deliveries });
  const relay = startOutboxRelay(store, { events, deliveries }, log);
  return {
    /** Takes no new jobs, lets running ones finish, then closes connections. */
    async stop() {
      await Promise.all(consumers.map((consumer) => consumer.close()));
      await relay.stop();
      await Promise.all([events.close(), deliveries.close(), pacer.close(), delivery.poster.close()]);
    },
  };
}
