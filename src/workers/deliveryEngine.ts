import type { Logger } from 'pino';
import { hookDisableRule, type Config } from '../config.js';
import { reportOf, type Delivery, type DeliveryJobData, type DeliveryReport } from '../domain/delivery.js';
import type { FiredEvent } from '../domain/events.js';
import { createTurnCounter } from '../domain/turns.js';
import type { Metrics } from '../observability/metrics.js';
import { createInProcessQueue } from '../queue/inProcessQueue.js';
import type { JobHandler } from '../queue/jobQueue.js';
import { listenCertificateFingerprints } from '../storage/listenCertificates.js';
import type { Store } from '../storage/store.js';
import { createDeliverer, NEAR_WAIT_MS } from './deliver.js';
import { createDeliveryJobHandler } from './deliveryJob.js';
import type { Parking } from './deliveryWrites.js';
import { createEventJobHandler, type EventJobResult } from './eventJob.js';
import { createInFlightLimits, defaultInFlightLimits } from './inFlight.js';
import { createLeases } from './leases.js';
import { createLine } from './line.js';
import { createLocalPacer, type Pacer } from './pacer.js';
import { createPoster } from './poster.js';
import { startRelay } from './relay.js';

/**
 * Jobs of each queue a process runs at once, per delivery it may send at once. Jobs wait for
 * their deliveries, and a job costs only memory while it waits: enough are taken that another
 * account's job is taken while one account's burst waits for its in-flight room.
 */
export const JOBS_PER_DELIVERY_SLOT = 4;

export interface EngineDeps {
  config: Config;
  store: Store;
  metrics: Metrics;
  log: Logger;
}

/**
 * The engine of one process that delivers, in either mode: the line every delivery passes
 * (in-flight caps, turns between accounts, a short wait for its time) in front of the one
 * delivery handler (gate, claim, POST, record), and the handlers of the two queues' jobs, which
 * hand it their deliveries. `parking` is the `deliveries` queue, where longer waits go.
 */
export function createEngine({ config, store, metrics, log }: EngineDeps, pacer: Pacer, parking: Parking) {
  const poster = createPoster({
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    allowPrivateNetworks: config.DELIVERY_ALLOW_PRIVATE_NETWORKS,
    dns: { timeoutMs: config.DELIVERY_DNS_TIMEOUT_MS, servers: config.DELIVERY_DNS_SERVERS },
    trustedCertificates: () => listenCertificateFingerprints(config.DATA_DIR),
  });
  const stopping = new AbortController();
  const settings = { ratePerTarget: config.DELIVERY_RATE_PER_TARGET, maxWaitMs: config.DELIVERY_MAX_WAIT };
  const turnOf = createTurnCounter();
  const deliverer = createDeliverer({
    store,
    pacer,
    poster,
    settings,
    metrics,
    log,
    secretsKey: config.SECRETS_KEY,
    parking,
    stopping: stopping.signal,
    disableRule: hookDisableRule(config),
    turnOf,
  });
  const defaults = defaultInFlightLimits(config.DELIVERY_CONCURRENCY);
  const inFlight = createInFlightLimits(
    {
      perTarget: config.DELIVERY_MAX_IN_FLIGHT_PER_TARGET ?? defaults.perTarget,
      perAccount: config.DELIVERY_MAX_IN_FLIGHT_PER_ACCOUNT ?? defaults.perAccount,
      perHost: config.DELIVERY_MAX_IN_FLIGHT_PER_HOST ?? defaults.perHost,
    },
    deliverer.needsRoom,
  );
  const line = createLine<Delivery, DeliveryReport>(deliverer.deliver, {
    concurrency: config.DELIVERY_CONCURRENCY,
    admission: inFlight,
    roomWaitMs: NEAR_WAIT_MS,
    leaveLine: deliverer.leaveLine,
    closedOutcome: (delivery) => reportOf(delivery, 'queued'),
    log,
  });
  const leases = createLeases(store, log);
  /**
   * Puts a delivery in line, at its turn among its account's due in the same second, from `dueAt`,
   * and holds its lease while it is there: leased from its job's time (a parked job's relay time
   * is a grace after it, a relayed copy's a grace after the relay took it), else from now (just
   * fanned out).
   */
  const deliver = (delivery: Delivery, dueAt?: number) => {
    const now = Date.now();
    const outcome = line.add({ id: delivery.id, data: delivery, runAt: dueAt, priority: turnOf(delivery.accountId, dueAt ?? now, now) });
    leases.hold(delivery.id, Math.min(dueAt ?? now, now), outcome);
    return outcome;
  };
  return {
    line,
    handlers: {
      events: createEventJobHandler(store, deliver) satisfies JobHandler<FiredEvent, EventJobResult>,
      deliveries: createDeliveryJobHandler(store, deliver) satisfies JobHandler<DeliveryJobData, DeliveryReport>,
    },
    /** Jobs of each queue to run at once. */
    jobConcurrency: JOBS_PER_DELIVERY_SLOT * config.DELIVERY_CONCURRENCY,
    /** Takes no new deliveries, leaves those waiting to the relay (renewing their leases no more), lets the POSTs in flight finish and their outcomes commit. */
    async stop() {
      stopping.abort();
      await leases.stop();
      await line.close();
      await deliverer.settled();
      await Promise.all([pacer.close(), poster.close()]);
    },
  };
}

/**
 * The embedded mode's engine, inside the web process: both queues in the process, an in-process
 * pacer, and the relay. Returns the `events` queue the services add fired events to.
 */
export function startEmbeddedEngine(deps: EngineDeps) {
  const { config, log } = deps;
  const options = { concurrency: JOBS_PER_DELIVERY_SLOT * config.DELIVERY_CONCURRENCY, capacity: config.EMBEDDED_QUEUE_CAPACITY, log };
  // The queues call the handlers only when a job runs, after the engine below has made them.
  const deliveries = createInProcessQueue<DeliveryJobData, DeliveryReport>('deliveries', (data, job) => handlers.deliveries(data, job), options);
  const events = createInProcessQueue<FiredEvent, EventJobResult>('events', (data, job) => handlers.events(data, job), options);
  const engine = createEngine(deps, createLocalPacer(config.DELIVERY_BUDGET_PER_HOST), { queue: deliveries, keepsDelayedJobs: false });
  const { handlers } = engine;
  const relay = startRelay(deps.store, { events, deliveries }, log, config.DELIVERY_MAX_WAIT, deps.metrics);
  deps.metrics.watchQueues({ queues: { events, deliveries }, line: engine.line });
  return {
    events,
    /** Stops the relay and the queues' intake, lets running deliveries finish. */
    async stop() {
      await relay.stop();
      await Promise.all([events.close(), deliveries.close(), engine.stop()]);
    },
  };
}
