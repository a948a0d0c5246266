import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the queue gauges read at scrape time; a queue this process does not see is left out. */
interface QueueCounts {
  counts(): Promise<{ ready: number; waiting: number }>;
}

/**
 * One registry per process role, so tests can build many apps without metrics colliding. No
 * metric has a per-target or per-account label: those would grow without bound.
 */
export function createMetrics() {
  const registry = new Registry();
  const watched: { events?: QueueCounts; deliveries?: QueueCounts } = {};
  const total = async (queue: QueueCounts | undefined) => {
    const counts = await queue?.counts();
    return counts && counts.ready + counts.waiting;
  };
  return {
    registry,
    /** Points the queue gauges at this process's queues. */
    watchQueues(queues: { events?: QueueCounts; deliveries?: QueueCounts }) {
      Object.assign(watched, queues);
    },
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Deliveries by outcome (delivered, failed, refused, expired)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    deliveryDuration: new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one delivery POST, connect to response',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveryWait: new Histogram({
      name: 'webhook_delivery_wait_seconds',
      help: 'Time from a delivery being queued (fan-out) to its POST: pacing and queueing together',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    }),
    throttled: new Counter({
      name: 'webhook_throttled_total',
      help: 'Deliveries answered 429 or 503: recorded failed, and their target held for its Retry-After',
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'event_queue_depth',
      help: 'Events waiting to be fanned out or being fanned out',
      registers: [registry],
      async collect() {
        const depth = await total(watched.events).catch(() => Number.NaN);
        if (depth !== undefined) this.set(depth);
      },
    }),
    deliveriesWaiting: new Gauge({
      name: 'webhook_deliveries_waiting_for_slot',
      help: 'Deliveries waiting for their slot at a paced or held target (delayed jobs)',
      registers: [registry],
      async collect() {
        const counts = await watched.deliveries?.counts().catch(() => ({ ready: Number.NaN, waiting: Number.NaN }));
        if (counts) this.set(counts.waiting);
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
