import { loadConfig } from '../src/config.js';
import { MAX_PER_SECOND_RANGE } from '../src/domain/hooks.js';

/** The service's own defaults, as it parses them from an empty environment. */
export const SERVICE_DEFAULTS = loadConfig({});

/** Load-generator connections for upserts and call ingestion. */
export const UPSERT_CONNECTIONS = 50;
/** The durable minimum's closed loops, and its pg and undici pools (issue 15's reference shape). */
export const DURABLE_MINIMUM_CONCURRENCY = 50;
/** The upsert figure: the service's DATABASE_POOL_SIZE and the raw driver's pool, both this size. */
export const UPSERT_POOL_SIZE = 50;
/** The backlog figure: deliveries due at once, against a backlog this many times smaller. */
export const BACKLOG_DUE = 100_000;
export const BACKLOG_SMALL = 10_000;
/** The growth figure: delivery rows already in the table. */
export const GROWTH_DELIVERY_ROWS = 10_000_000;
/** The pacing figure: one target at each of these rates, all at once, while other deliveries keep the engine busy. */
export const PACED_RATES = [1, 5, 20, 100];
/** Alternating API/direct windows per upsert figure. */
export const UPSERT_ROUNDS = 3;
export const FANOUT_HOOKS = 1_000;
export const FANOUT_REPS = 3;
export const HOOK_SIZES = [10, 1_000, 10_000];
export const PGLITE_LATENCY_RATE = 50;
/** BENCH_ONLY=upsertsPostgres: new-contact latency at this rate, about half figure 2's peak on this host. */
export const UPSERTS_ALONE_LATENCY_RATE = 500;

/** Workers of the stack with the default pacing (figures 7 and 8), as in the pacing tests. */
export const PACED_WORKERS = 2;
/** The saturated-target figure: account B's events, each to this many hooks of B's own, paced at the fastest a subscription may ask. */
export const SPREAD_HOOKS = 8;
export const SPREAD_EVENTS = 400;
export const SPREAD_MAX_PER_SECOND = MAX_PER_SECOND_RANGE.max;
export const SPREAD_ROUNDS = 2;
/** ... while account A has this many deliveries queued at one hook at the default pace. */
export const BACKLOG_EVENTS = 3_000;
/** ... and A's target is measured alone, draining that backlog, for this long before B's rounds. */
export const SATURATED_ALONE_MS = 5_000;

/**
 * What `npm start` (package.json) sets for the embedded default beyond the service's own settings:
 * glibc's malloc keeps at most two arenas, not eight per core, which holds about 8 MiB less of
 * what starting took (measured: 151 MiB settled without it, 143 MiB with it).
 */
export const EMBEDDED_START_ENV = { MALLOC_ARENA_MAX: '2' };

/**
 * What the engine figures run with: pacing far above anything the bench sends (one target URL
 * takes every delivery of figure 2) and in-flight caps at DELIVERY_CONCURRENCY (all bench
 * traffic is one account and one host), so that they measure the engine, not the pacing.
 */
export const ENGINE_ENV = {
  // The upsert figure compares the web process with a raw driver pool of this size.
  DATABASE_POOL_SIZE: String(UPSERT_POOL_SIZE),
  DELIVERY_RATE_PER_TARGET: '1000000',
  DELIVERY_BUDGET_PER_HOST: '1000000000',
  DELIVERY_MAX_IN_FLIGHT_PER_TARGET: String(SERVICE_DEFAULTS.DELIVERY_CONCURRENCY),
  DELIVERY_MAX_IN_FLIGHT_PER_ACCOUNT: String(SERVICE_DEFAULTS.DELIVERY_CONCURRENCY),
  DELIVERY_MAX_IN_FLIGHT_PER_HOST: String(SERVICE_DEFAULTS.DELIVERY_CONCURRENCY),
};

export interface BenchSettings {
  adminUrl: string;
  redisUrl: string;
  /** Multiplies every measuring window (BENCH_SCALE=0.3 for trying changes out). */
  scale: number;
  waitIdleMs: number;
  contactSizes: number[];
  pgliteContactSizes: number[];
  /**
   * BENCH_LATENCY_TRACE=<file>: each latency window appends a line of every event's scheduled,
   * sent and received times, on the CLOCK_MONOTONIC that `perf record -k mono` also stamps.
   */
  latencyTrace?: string;
  /**
   * BENCH_LATENCY_RATE=<calls/s>: what is measured at shares of figure 2's peak (figure 3 and
   * its reference, 5's subscriptions series, and in a full run figure 1's new-contact latency) at
   * this one fixed rate instead, so that runs compared with each other load the service alike
   * however the host's peak moved; the report then claims no goal for figure 3.
   */
  latencyRate?: number;
  durations: {
    warm: number;
    upsert: number;
    upsertPglite: number;
    upsertGrowth: number;
    raw: number;
    e2eTargetSeconds: number;
    latency: number;
    latencyGrowth: number;
    latencyWarm: number;
  };
}

function positiveOrUndefined(name: string, text: string | undefined): number | undefined {
  if (!text) return undefined;
  const value = Number(text);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, not ${text}`);
  return value;
}

/** The run's settings from the environment (BENCH_*), every window scaled by BENCH_SCALE. */
export function benchSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const scale = Number(env.BENCH_SCALE ?? '1');
  const ms = (value: number) => Math.max(500, Math.round(value * scale));
  const sizes = (text: string) => text.split(',').map(Number);
  return {
    adminUrl: env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    scale,
    waitIdleMs: Number(env.BENCH_WAIT_IDLE_S ?? '180') * 1000,
    contactSizes: sizes(env.BENCH_PG_SIZES ?? '1000,100000,1000000'),
    pgliteContactSizes: sizes(env.BENCH_PGLITE_SIZES ?? '1000,100000'),
    latencyTrace: env.BENCH_LATENCY_TRACE || undefined,
    latencyRate: positiveOrUndefined('BENCH_LATENCY_RATE', env.BENCH_LATENCY_RATE),
    durations: {
      warm: ms(2_000),
      upsert: ms(10_000),
      upsertPglite: ms(8_000),
      upsertGrowth: ms(6_000),
      raw: ms(5_000),
      e2eTargetSeconds: 8 * scale,
      latency: ms(10_000),
      latencyGrowth: ms(5_000),
      latencyWarm: ms(1_500),
    },
  };
}
