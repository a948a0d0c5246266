/**
 * One drain of figure 10 (bench/figures/scaleOut.ts): a backlog of calls ingested while no
 * worker runs, then drained by N workers started together with the web process idle; its rate,
 * its CPU per process, and the rows it updated. A drain skewed by others' load or refused
 * connections is run again.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { sleep } from '../../kit/waiting.js';
import { LOG_DIR, type BenchContext } from '../context.js';
import { fmt } from '../results.js';
import { UPSERT_CONNECTIONS } from '../settings.js';
import { fireCall, runCount } from '../support/clients.js';
import { cpuPerOp, type CpuWindow } from '../support/cpu.js';
import { waitForQuiet } from '../support/environment.js';
import { monotonicMs } from '../support/load.js';
import type { PostgresStack } from '../support/stacks.js';

/** A drain during which a process was refused a connection ("too many clients", others' tests on the same server) is run again, at most this many times. */
const ATTEMPTS = 3;
/** Before each drain, the workers wait this long at most for the machine to go quiet (BENCH_WAIT_IDLE_S caps it too). */
const QUIET_WAIT_MS = 60_000;
/** A drain during which other processes took more of the machine than this is run again (kept, marked skewed, after ATTEMPTS). */
export const MOST_OTHER_SHARE = 0.25;
export const ACCOUNT = 'scale-out';
export const CHANNEL = '/scale';

export type Shape = 'single' | 'cluster';
export const SHAPE_LABEL: Record<Shape, string> = { single: 'one Redis server', cluster: 'Redis Cluster, 3 masters' };

interface ProcessCpu {
  pid: number;
  cpuMs: number;
  msPerDelivery: number;
}

export interface Drain {
  shape: Shape;
  workers: number;
  events: number;
  /** First to last receipt, all receipts: the method of figure 2's diagnostic. */
  perSecond: number;
  /** Receipts from the moment the last worker reported started (or the first receipt, if later) to the last one. */
  allUpPerSecond: number;
  /** ms from the first receipt until every worker had started (workers start together, but not at once). */
  startSpreadMs: number;
  /** Receipts in the all-up window: the operations the CPU figures are per. */
  measuredDeliveries: number;
  duplicates: number;
  /** CPU ms per delivery by group over the all-up window (as the CPU table shows it). */
  cpuMsPerDelivery: Record<string, number>;
  utilisation: number;
  /** Each worker's own, and each of the shape's Redis servers' own (the meter's "redis" sums every redis-server). */
  perWorker: ProcessCpu[];
  perRedisServer: ProcessCpu[];
  /** Share of the machine other processes used just before the workers started, and during the drain ("other" CPU ÷ cores × window). */
  otherLoadBefore: number;
  /**
   * Rows of `deliveries` updated per delivery (pg_stat_user_tables): a claim and an outcome make
   * 2; a claim given back (a late departure: the claim's commit came too long after the departure
   * the pacer granted, deliver.ts) adds 2 more, its give-back and the claim again.
   */
  updatesPerDelivery: number;
  otherShare: number;
  /** Drains run to get this one (again after others' load or refused connections). */
  attempts: number;
}

/** CPU ms each of `pids` used over the windows (0 for one the snapshots do not know). */
function cpuOfPids(windows: CpuWindow[], pids: number[], deliveries: number): ProcessCpu[] {
  return pids.map((pid) => {
    let seconds = 0;
    for (const [before, after] of windows) {
      const end = after.processes.get(String(pid))?.seconds;
      if (end !== undefined) seconds += Math.max(0, end - (before.processes.get(String(pid))?.seconds ?? 0));
    }
    const cpuMs = Math.round(seconds * 1000);
    return { pid, cpuMs, msPerDelivery: Math.round((seconds * 1000 * 1000) / deliveries) / 1000 };
  });
}

/** Pids the snapshots put in `group`. */
const pidsOfGroup = (windows: CpuWindow[], group: string) => [
  ...new Set(windows.flatMap(([, after]) => [...after.processes].filter(([, process]) => process.group === group).map(([pid]) => Number(pid)))),
];

/** Times a service log says PostgreSQL refused it a connection. */
const refusals = () =>
  readdirSync(LOG_DIR).reduce((total, file) => total + (readFileSync(join(LOG_DIR, file), 'utf8').match(/too many clients/g)?.length ?? 0), 0);

/** Rows of the deliveries table updated so far, as PostgreSQL's statistics count them: in its day partitions. */
async function deliveryUpdates(ctx: BenchContext) {
  const { rows } = await ctx.sql(
    `SELECT coalesce(sum(s.n_tup_upd), 0)::bigint AS n FROM pg_inherits i JOIN pg_stat_user_tables s ON s.relid = i.inhrelid WHERE i.inhparent = 'deliveries'::regclass`,
  );
  return Number((rows[0] as { n: string } | undefined)?.n ?? NaN);
}

/** Ingests `events` calls while no worker runs. */
async function ingestBacklog(ctx: BenchContext, stack: PostgresStack, events: number) {
  await stack.stopWorkers();
  await ctx.receiver.reset();
  const pool = new Pool(stack.web.url, { connections: UPSERT_CONNECTIONS });
  try {
    await runCount(UPSERT_CONNECTIONS, events, () => fireCall(pool, ctx.token, ACCOUNT, randomUUID()));
  } finally {
    await pool.close();
  }
}

/** One drain: a backlog of `events`, then `workers` workers started together; throws unless every call was delivered exactly once. */
export async function drain(
  ctx: BenchContext,
  stack: PostgresStack,
  shape: Shape,
  workers: number,
  events: number,
  redisPids: number[],
  cpuLabel?: string,
): Promise<Drain> {
  const what = `scale-out (${SHAPE_LABEL[shape]}, ${workers} worker${workers > 1 ? 's' : ''})`;
  for (let attempt = 1; ; attempt++) {
    const refusedBefore = refusals();
    const { result, windows } = await drainOnce(ctx, stack, shape, workers, events, redisPids);
    const refused = refusals() - refusedBefore;
    const cpu = cpuPerOp(windows, result.measuredDeliveries);
    const seconds = sum(windows.map(([before, after]) => after.at - before.at)) / 1000;
    result.otherShare = ((cpu.perOpMs.other ?? 0) * result.measuredDeliveries) / 1000 / seconds / os.cpus().length;
    result.attempts = attempt;
    // A warm-up drain (no CPU row) is not run again for others' load: only its processes' start matters.
    const skewed = cpuLabel !== undefined && result.otherShare > MOST_OTHER_SHARE;
    if (refused === 0 && (!skewed || attempt === ATTEMPTS)) {
      if (cpuLabel) {
        const recorded = ctx.cpu.record(cpuLabel, windows, result.measuredDeliveries);
        Object.assign(result, { cpuMsPerDelivery: recorded.perOpMs, utilisation: recorded.utilisation });
      }
      if (skewed)
        ctx.progress(`  other processes still took ${fmt(result.otherShare * 100)}% of the machine after ${ATTEMPTS} attempts; kept, and marked skewed`);
      return result;
    }
    if (attempt === ATTEMPTS) throw new Error(`${what}: PostgreSQL refused connections (too many clients) in ${ATTEMPTS} attempts`);
    ctx.progress(
      refused > 0
        ? `  PostgreSQL refused ${refused} connections (too many clients: other users of the server?); waiting 10 s, then again`
        : `  other processes took ${fmt(result.otherShare * 100)}% of the machine during the drain (${fmt(result.perSecond)}/s); again`,
    );
    await sleep(refused > 0 ? 10_000 : 0);
  }
}

async function drainOnce(
  ctx: BenchContext,
  stack: PostgresStack,
  shape: Shape,
  workers: number,
  events: number,
  redisPids: number[],
): Promise<{ result: Drain; windows: CpuWindow[] }> {
  await ingestBacklog(ctx, stack, events);
  // Others' work on this machine (test runs) takes the cores the workers are measured on.
  const otherLoadBefore = await waitForQuiet(ctx.cpu.pids, Math.min(ctx.settings.waitIdleMs, QUIET_WAIT_MS), ctx.progress);
  const updatesBefore = await deliveryUpdates(ctx);
  await stack.startWorkers(workers, { together: true });
  const allUpAt = monotonicMs();
  const windows: CpuWindow[] = [];
  const drained = await ctx.cpu.metered(windows, () => ctx.receiver.waitForCount(events, 180_000, CHANNEL));
  // Late duplicates (a delivery sent twice) would arrive just after the count is reached.
  // Also long enough for the backends to report their statistics (at most once a second).
  await sleep(1_500);
  const stats = await ctx.receiver.stats(CHANNEL);
  await stack.stopWorkers();
  if (stats.count < events) throw new Error(`scale-out (${shape}, ${workers} workers): ${stats.count} of ${events} delivered`);
  if (stats.duplicates > 0 || stats.count !== events) {
    throw new Error(`scale-out (${shape}, ${workers} workers): ${stats.duplicates} duplicates, ${stats.count} receipts for ${events} calls`);
  }
  const times = [...(await ctx.receiver.times(`${CHANNEL} `)).values()].sort((a, b) => a - b);
  // From the last worker's start, or from the first receipt when every worker was up before it.
  const from = Math.max(allUpAt, drained.firstAt);
  const inWindow = times.filter((at) => at >= from);
  const measuredDeliveries = Math.max(1, inWindow.length);
  const last = drained.lastAt;
  const result: Drain = {
    shape,
    workers,
    events,
    perSecond: (drained.count - 1) / ((last - drained.firstAt) / 1000),
    allUpPerSecond: (inWindow.length - 1) / ((last - from) / 1000),
    startSpreadMs: Math.max(0, allUpAt - drained.firstAt),
    measuredDeliveries,
    duplicates: stats.duplicates,
    cpuMsPerDelivery: {},
    utilisation: 0,
    perWorker: cpuOfPids(windows, pidsOfGroup(windows, 'worker'), measuredDeliveries),
    perRedisServer: cpuOfPids(windows, redisPids, measuredDeliveries),
    otherLoadBefore,
    updatesPerDelivery: ((await deliveryUpdates(ctx)) - updatesBefore) / events,
    otherShare: 0,
    attempts: 1,
  };
  return { result, windows };
}

export const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
