import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The outcomes a delivery ends with, each counted from zero so that a first one shows as an increase. */
const OUTCOMES = ['delivered', 'failed', 'refused', 'expired', 'unknown'] as const;
const JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

/** What readiness checks, as /readyz does; an operator's alert names them. */
type Dependency = 'postgres' | 'redis';

/**
 * What a gauge reads at scrape time is given up after this, and shows as unknown (NaN), or as
 * failing for readiness: a scrape never waits on a dependency that is away, and answers well
 * within Prometheus's own scrape timeout (10 s by default), so the readiness gauge is seen.
 */
const SCRAPE_READ_TIMEOUT_MS = 2_000;

/** Job counts by state, as src/queue/jobQueue.ts's JobQueue reads them. */
type JobCounts = Record<(typeof JOB_STATES)[number], number>;

/** What the gauges read at scrape time; what a process does not have is left out. */
interface Watched {
  /** The events not yet fanned out (src/storage/events.ts). */
  outbox?: { outbox(): Promise<{ depth: number; oldestSeconds: number }> };
  /** Queued deliveries whose time has come (src/storage/deliveries.ts). */
  due?: { oldestDueSeconds(): Promise<number> };
  /** The queues' jobs by state, by queue name. */
  queues?: Record<string, { counts(): Promise<JobCounts> }>;
  /** The process's line of deliveries (src/workers/line.ts). */
  line?: { counts(): { ready: number; waiting: number; blocked: number } };
}

/** What `read` answers within SCRAPE_READ_TIMEOUT_MS, or `otherwise` (it failed, or is too slow). */
async function bounded<T>(read: () => Promise<T>, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(otherwise), SCRAPE_READ_TIMEOUT_MS)));
  const answer = read().catch(() => otherwise);
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/**
 * One registry per process role, so tests can build many apps without metrics colliding. No
 * metric has a per-target or per-account label: those would grow without bound. The alert rules
 * and the dashboard in ops/ read these names.
 */
export function createMetrics() {
  const registry = new Registry();
  const watched: Watched = {};
  const readiness = new Map<Dependency, () => Promise<unknown>>();
  // The outbox gauges share one query per scrape: both ask while it is on its way.
  let outboxRead: Promise<{ depth: number; oldestSeconds: number }> | undefined;
  const readOutbox = (outbox: NonNullable<Watched['outbox']>) =>
    (outboxRead ??= bounded(() => outbox.outbox(), { depth: Number.NaN, oldestSeconds: Number.NaN }).finally(() => (outboxRead = undefined)));

  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Deliveries by outcome (delivered, failed, refused, expired, unknown: its worker died mid-POST)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of OUTCOMES) deliveries.inc({ outcome }, 0);
  const relayed = new Counter({
    name: 'contact_hooks_relayed_total',
    help: 'Events and deliveries the relay added again from PostgreSQL: their process died, or Redis lost or never got their job (0 while every process lives and Redis keeps its jobs)',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  for (const queue of ['events', 'deliveries']) relayed.inc({ queue }, 0);

  return {
    registry,
    /** Points the gauges at what this process has. */
    watchQueues(queues: Watched) {
      Object.assign(watched, queues);
    },
    /**
     * Counts, at each scrape, the worker processes consuming the `events` queue (a web process on
     * Redis). Registered only then: an unlabelled gauge shows 0 until set, and a process without
     * workers to count (a worker, the embedded mode) would report "no worker" to the alert.
     */
    watchWorkers(events: { workers(): Promise<number> }) {
      registry.registerMetric(
        new Gauge({
          name: 'contact_hooks_workers_consuming',
          help: 'Worker processes consuming the events queue on Redis (seen from a web process)',
          registers: [],
          async collect() {
            this.set(await bounded(() => events.workers(), Number.NaN));
          },
        }),
      );
    },
    /** Adds a dependency to the readiness gauge, checked at each scrape. */
    watchReadiness(dependency: Dependency, check: () => Promise<unknown>) {
      readiness.set(dependency, check);
    },
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    deliveries,
    relayed,
    deliveryDuration: new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one delivery POST, connect to response',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveryWait: new Histogram({
      name: 'webhook_delivery_wait_seconds',
      help: 'Time from a delivery being queued (its event firing) to its POST: the outbox, pacing and queueing together',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    }),
    lateDepartures: new Counter({
      name: 'webhook_late_departures_total',
      help: 'Deliveries that would have left later than their granted departure (the process stalled) and passed the gate again',
      registers: [registry],
    }),
    lateStarts: new Counter({
      name: 'webhook_late_starts_total',
      help: 'POSTs whose first byte left later than their departure allowed (a long handshake, no free connection): their target was spaced further after them',
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
      help: 'Events recorded and not yet fanned out by a worker (the outbox)',
      registers: [registry],
      async collect() {
        if (watched.outbox) this.set((await readOutbox(watched.outbox)).depth);
      },
    }),
    outboxLag: new Gauge({
      name: 'event_outbox_oldest_age_seconds',
      help: 'How long the oldest event not yet fanned out has waited (0 when none waits): grows when no worker takes the events queue',
      registers: [registry],
      async collect() {
        if (watched.outbox) this.set((await readOutbox(watched.outbox)).oldestSeconds);
      },
    }),
    oldestDue: new Gauge({
      name: 'webhook_oldest_due_delivery_age_seconds',
      help: 'How long the oldest queued delivery whose time has come has waited past it (0 when none): grows when nobody sends them',
      registers: [registry],
      async collect() {
        const { due } = watched;
        if (due) this.set(await bounded(() => due.oldestDueSeconds(), Number.NaN));
      },
    }),
    ready: new Gauge({
      name: 'contact_hooks_ready',
      help: 'Whether a dependency answers this process (1) or not (0), as /readyz checks it',
      labelNames: ['dependency'] as const,
      registers: [registry],
      async collect() {
        const answers = [...readiness].map(async ([dependency, check]) => this.set({ dependency }, await bounded(() => check().then(() => 1), 0)));
        await Promise.all(answers);
      },
    }),
    queueJobs: new Gauge({
      name: 'contact_hooks_queue_jobs',
      help: 'Jobs of each queue (events, deliveries) by state: waiting, active, delayed, completed (kept) and failed (kept)',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        const read = Object.entries(watched.queues ?? {}).map(async ([queue, counted]) => {
          const counts = await bounded(() => counted.counts(), undefined);
          for (const state of JOB_STATES) this.set({ queue, state }, counts?.[state] ?? Number.NaN);
        });
        await Promise.all(read);
      },
    }),
    lineDeliveries: new Gauge({
      name: 'webhook_deliveries_in_line',
      help: "Deliveries in this process's line: ready or being sent, waiting for their time (up to a second), waiting for in-flight room",
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const counts = watched.line?.counts();
        if (!counts) return;
        this.set({ state: 'ready' }, counts.ready);
        this.set({ state: 'waiting' }, counts.waiting);
        this.set({ state: 'blocked' }, counts.blocked);
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
