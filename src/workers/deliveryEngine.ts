import type { Logger } from 'pino';
import { hookDisableRule, type Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { DelayQueue } from '../queue/jobQueue.js';
import { createLocalQueue } from '../queue/localQueue.js';
import { createLocalHandoff } from '../queue/handoff.js';
import { listenCertificateFingerprints } from '../storage/listenCertificates.js';
import type { Store } from '../storage/store.js';
import { createDeliverer } from './deliver.js';
import { startFanOut } from './fanOut.js';
import { createInFlightLimits, defaultInFlightLimits } from './inFlight.js';
import type { DeliveryJob } from './jobs.js';
import { startOutboxRelay } from './outboxRelay.js';
import { createLocalPacer, type Pacer } from './pacer.js';
import { createPoster } from './poster.js';

/** Fan-out keeps at most this many deliveries per concurrent POST ready in the local queue. */
const READY_PER_SLOT = 4;

export interface EngineDeps {
  config: Config;
  store: Store;
  metrics: Metrics;
  log: Logger;
}

/**
 * The engine of one process, in either mode: fan-out from the outbox into a local queue, the one
 * delivery handler behind it, and the relay of overdue deliveries. `delayQueue` keeps deliveries
 * that wait long (BullMQ); without it they wait on timers in the process.
 */
export function startEngine({ config, store, metrics, log }: EngineDeps, pacer: Pacer, delayQueue: DelayQueue<DeliveryJob> | undefined) {
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
  const stopping = new AbortController();
  const settings = { ratePerTarget: config.DELIVERY_RATE_PER_TARGET, maxWaitMs: config.DELIVERY_MAX_WAIT };
  const deliverer = createDeliverer({ store, pacer, poster, settings, metrics, log, secretsKey: config.SECRETS_KEY, delayQueue, stopping: stopping.signal, disableRule: hookDisableRule(config) });
  const deliveries = createLocalQueue(deliverer.deliver, {
    capacity: config.EMBEDDED_QUEUE_CAPACITY,
    concurrency: config.DELIVERY_CONCURRENCY,
    admission: inFlight,
    log,
    name: 'deliveries',
  });
  const fanOut = startFanOut(store, deliveries, { readyLimit: READY_PER_SLOT * config.DELIVERY_CONCURRENCY, log });
  const relay = startOutboxRelay(store, deliveries, log, config.DELIVERY_MAX_WAIT);
  metrics.watchQueues({ outbox: store.events, due: store.deliveries, local: deliveries, delayed: delayQueue });
  return {
    deliveries,
    wakeFanOut: fanOut.wake,
    /** Where handed deliveries go (src/queue/handoff.ts), and how many fit now. */
    handed: { room: fanOut.room, take: fanOut.take },
    /** Takes no new work, lets the POSTs in flight finish and their outcomes commit. */
    async stop() {
      await Promise.all([fanOut.stop(), relay.stop()]);
      stopping.abort();
      await deliveries.close();
      await deliverer.settled();
      await Promise.all([pacer.close(), poster.close()]);
    },
  };
}

/**
 * The embedded mode's engine, inside the web process: an in-process pacer, and deliveries that
 * wait on timers here. Returns the handoff the services give committed deliveries to.
 */
export function startEmbeddedEngine(deps: EngineDeps) {
  const engine = startEngine(deps, createLocalPacer(deps.config.DELIVERY_BUDGET_PER_HOST), undefined);
  const handoff = createLocalHandoff();
  handoff.listen(engine.handed.take);
  return { handoff, stop: engine.stop };
}
