import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the gauges read at scrape time; what a process does not have is left out. */
interface Watched {
  /** The events not yet fanned out (src/storage/events.ts). */
  outbox?: { outbox(): Promise<{ depth: number; oldestSeconds: number }> };
  /** The process's local queue of deliveries. */
  local?: { counts(): { ready: number; waiting: number } };
  /** Deliveries parked for a later time (BullMQ's delayed jobs). */
  delayed?: { counts(): Promise<{ ready: number; waiting: number }> } | undefined;
}

/**
 * One registry per process role, so tests can build many apps without metrics colliding. No
 * metric has a per-target or per-account label: those would grow without bound.
 */
export function createMetrics() {
  const registry = new Registry();
  const watched: Watched = {};
  return {
    registry,
    /** Points the gauges at what this process has. */
    watchQueues(queues: Watched) {
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
    lateDepartures: new Counter({
      name: 'webhook_late_departures_total',
      help: 'Deliveries that would have left later than their granted departure (the process stalled) and passed the gate again',
      registers: [registry],
    }),
    throttled: new Counter({
      name: 'webhook_throttled_total',
      help: 'Deliveries answered 429 or 503: recorded failed, and their target held for its Retry-After',
      registers: [registry],
    }),
    hooksDisabled: new Counter({
      name: 'webhook_hooks_disabled_total',
      help: 'Hooks disabled because every delivery to them failed for HOOK_DISABLE_AFTER (auto-disable)',
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'event_queue_depth',
      help: 'Events in the outbox waiting to be fanned out',
      registers: [registry],
      async collect() {
        const outbox = await watched.outbox?.outbox().catch(() => ({ depth: Number.NaN }));
        if (outbox) this.set(outbox.depth);
      },
    }),
    deliveriesWaiting: new Gauge({
      name: 'webhook_deliveries_waiting_for_slot',
      help: "Deliveries waiting for their time at a paced or held target: this process's timers, and the delayed jobs of all",
      registers: [registry],
      async collect() {
        if (!watched.local && !watched.delayed) return;
        const delayed = await watched.delayed?.counts().catch(() => ({ ready: Number.NaN, waiting: Number.NaN }));
        this.set((watched.local?.counts().waiting ?? 0) + (delayed?.waiting ?? 0));
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
