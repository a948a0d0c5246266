/**
 * Figure 10: scale-out (issue 18 part 4). The delivery stage alone, as figure 2's diagnostic
 * measures it (a backlog of calls ingested while no worker runs, then drained with the web
 * process idle), with 1, 2 and 4 worker processes, on the run's Redis (one server) and on a
 * Redis Cluster of 3 masters started for the figure (kit/redisCluster.ts). Each drain's CPU is
 * recorded per process group, and per worker and per Redis server in the figure's data, so that
 * deliveries per second per core can be derived for a machine with more cores than this one.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { startRedisCluster } from '../../kit/redisCluster.js';
import { sleep } from '../../kit/waiting.js';
import { LOG_DIR, type BenchContext } from '../context.js';
import { fmt, ratioRow, type FigureResult, type Row } from '../results.js';
import { ENGINE_ENV, UPSERT_CONNECTIONS } from '../settings.js';
import { fireCall, runCount } from '../support/clients.js';
import { cpuPerOp, type CpuWindow } from '../support/cpu.js';
import { waitForQuiet } from '../support/environment.js';
import { monotonicMs } from '../support/load.js';
import { startPostgresStack, type PostgresStack } from '../support/stacks.js';

export const SCALE_OUT_WORKERS = [1, 2, 4];
/** Calls of the sizing drain (1 worker, single Redis) and of each shape's unmeasured warm-up drain. */
const PROBE_CALLS = 1_500;
/** How long a 1-worker drain should last at BENCH_SCALE=1; 2 and 4 workers take less by their speed-up. */
const TARGET_SECONDS = 8;
const FEWEST_CALLS = 1_000;
const MOST_CALLS = 60_000;
/**
 * Each process's pool: 4 workers and the web at the engine figures' 50 each would ask for more
 * than PostgreSQL's 100 connections (the workers' writes are group commits; they need few).
 */
const POOL_SIZE = 10;
/** A drain during which a process was refused a connection ("too many clients", others' tests on the same server) is run again, at most this many times. */
const ATTEMPTS = 3;
/** Before each drain, the workers wait this long at most for the machine to go quiet (BENCH_WAIT_IDLE_S caps it too). */
const QUIET_WAIT_MS = 60_000;
/** A drain during which other processes took more of the machine than this is run again (kept, marked skewed, after ATTEMPTS). */
const MOST_OTHER_SHARE = 0.25;
const ACCOUNT = 'scale-out';
const CHANNEL = '/scale';

type Shape = 'single' | 'cluster';
const SHAPE_LABEL: Record<Shape, string> = { single: 'one Redis server', cluster: 'Redis Cluster, 3 masters' };

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

/** The pid of each Redis server at `places` (INFO server), for telling the shape's servers apart from others on the machine. */
async function redisServerPids(places: (string | { host: string; port: number })[]): Promise<number[]> {
  const options = { lazyConnect: true, maxRetriesPerRequest: 1 };
  return Promise.all(
    places.map(async (place) => {
      const client = typeof place === 'string' ? new Redis(place, options) : new Redis({ ...place, ...options });
      try {
        await client.connect();
        const info = await client.info('server');
        return Number(/process_id:(\d+)/.exec(info)?.[1] ?? NaN);
      } finally {
        client.disconnect();
      }
    }),
  );
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
const pidsOfGroup = (windows: CpuWindow[], group: string) =>
  [...new Set(windows.flatMap(([, after]) => [...after.processes].filter(([, process]) => process.group === group).map(([pid]) => Number(pid))))];

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
async function drain(ctx: BenchContext, stack: PostgresStack, shape: Shape, workers: number, events: number, redisPids: number[], cpuLabel?: string): Promise<Drain> {
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
      if (skewed) ctx.progress(`  other processes still took ${fmt(result.otherShare * 100)}% of the machine after ${ATTEMPTS} attempts; kept, and marked skewed`);
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

async function drainOnce(ctx: BenchContext, stack: PostgresStack, shape: Shape, workers: number, events: number, redisPids: number[]): Promise<{ result: Drain; windows: CpuWindow[] }> {
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

/** A shape's stack (web only; workers per drain), its subscription, a warm-up drain, then a drain per worker count. */
async function measureShape(ctx: BenchContext, shape: Shape, env: Record<string, string>, redisPids: number[], size: (probe: Drain) => number) {
  const labels = { web: `web (scale-out, ${SHAPE_LABEL[shape]})`, worker: `worker (scale-out, ${SHAPE_LABEL[shape]})` };
  const stack = await startPostgresStack(ctx, { ...ENGINE_ENV, DATABASE_POOL_SIZE: String(POOL_SIZE), ...env }, labels, 0);
  try {
    ctx.progress(`figure 10: ${SHAPE_LABEL[shape]}, warm-up drain of ${fmt(PROBE_CALLS)} calls, 1 worker`);
    const probe = await drain(ctx, stack, shape, 1, PROBE_CALLS, redisPids);
    const events = size(probe);
    const drains: Drain[] = [];
    for (const workers of SCALE_OUT_WORKERS) {
      ctx.progress(`figure 10: ${SHAPE_LABEL[shape]}, backlog of ${fmt(events)} calls drained by ${workers} worker${workers > 1 ? 's' : ''}`);
      const measured = await drain(ctx, stack, shape, workers, events, redisPids, `scale-out: ${SHAPE_LABEL[shape]}, ${workers} worker${workers > 1 ? 's' : ''} drain a backlog`);
      ctx.progress(
        `  ${fmt(measured.perSecond)} deliveries/s first to last (${fmt(measured.allUpPerSecond)}/s once all ${workers} were up, ${fmt(measured.startSpreadMs)} ms after the first receipt)`,
      );
      drains.push(measured);
    }
    return drains;
  } finally {
    await stack.stop();
  }
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const OURS = ['web', 'worker', 'postgres', 'redis', 'receiver', 'bench'];

/** One line per drain of where the CPU went, for the notes. */
function cpuNote(drain: Drain) {
  const cpu = drain.cpuMsPerDelivery;
  const worker = drain.perWorker.map((process) => fmt(process.msPerDelivery, 3)).join(' + ');
  const redis = drain.perRedisServer.map((process) => fmt(process.msPerDelivery, 3)).join(' + ');
  const service = (cpu.worker ?? 0) + (cpu.postgres ?? 0) + sum(drain.perRedisServer.map((process) => process.msPerDelivery)) + (cpu.web ?? 0);
  return (
    `${SHAPE_LABEL[drain.shape]}, ${drain.workers} worker${drain.workers > 1 ? 's' : ''}: CPU ms per delivery worker ${fmt(cpu.worker ?? 0, 3)} (per process ${worker}), ` +
    `web ${fmt(cpu.web ?? 0, 3)}, postgres ${fmt(cpu.postgres ?? 0, 3)}, the shape's redis-server${drain.perRedisServer.length > 1 ? 's' : ''} ${redis}, receiver ${fmt(cpu.receiver ?? 0, 3)}; ` +
    `${fmt(drain.updatesPerDelivery, 2)} deliveries-row updates per delivery (2 without late departures); service total ${fmt(service, 3)} → ${fmt(1000 / service)} deliveries/s per core; machine ${fmt(drain.utilisation * 100)}% busy, other processes ${fmt(cpu.other ?? 0, 3)} (${fmt(drain.otherShare * 100)}% of the machine${drain.otherShare > MOST_OTHER_SHARE ? ', SKEWED' : ''})${drain.attempts > 1 ? `, attempt ${drain.attempts}` : ''}`
  );
}

/**
 * Figure 10: the run's database and Redis prefix; a subscription of its own on the receiver. The
 * cluster is started here and stopped before returning (also when a drain fails).
 */
export async function scaleOut(ctx: BenchContext): Promise<FigureResult> {
  const cores = os.cpus().length;
  // The subscription lives in PostgreSQL, so one serves both shapes; a web process of either can create it.
  const setup = await startPostgresStack(ctx, ENGINE_ENV, { web: 'web (scale-out setup)', worker: 'worker (scale-out setup)' }, 0);
  try {
    await setup.client.subscribe(await setup.client.newKey(ACCOUNT), 'new_conversation', `${ctx.receiver.url}${CHANNEL}`);
  } finally {
    await setup.stop();
  }

  // A Redis elsewhere (BENCH_REDIS_URL on another host) has no pid here: its CPU is then not counted.
  const singlePids = await redisServerPids([ctx.settings.redisUrl]);
  let events = 0;
  const single = await measureShape(ctx, 'single', {}, singlePids, (probe) => {
    events = Math.min(MOST_CALLS, Math.max(FEWEST_CALLS, Math.round(probe.perSecond * TARGET_SECONDS * ctx.settings.scale)));
    return events;
  });

  ctx.progress('figure 10: starting a Redis Cluster of 3 masters');
  const cluster = await startRedisCluster({ masters: 3 });
  let clustered: Drain[];
  try {
    const clusterPids = await redisServerPids(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    clustered = await measureShape(ctx, 'cluster', { REDIS_CLUSTER_NODES: cluster.nodes }, clusterPids, () => events);
  } finally {
    await cluster.stop();
  }

  const drains = [...single, ...clustered];
  const rows: Row[] = drains.map((measured) => {
    const base = drains.find((other) => other.shape === measured.shape && other.workers === 1)!;
    return ratioRow({
      figure: '10',
      what:
        `Scale-out, delivery stage alone: ${measured.workers} worker process${measured.workers > 1 ? 'es' : ''} (${SHAPE_LABEL[measured.shape]}) drain a backlog of ${fmt(measured.events)} calls, web idle ` +
        `(first to last receipt; once all ${measured.workers} were up: ${fmt(measured.allUpPerSecond)}/s)` +
        (measured.otherShare > MOST_OTHER_SHARE ? `; SKEWED: other processes took ${fmt(measured.otherShare * 100)}% of the machine` : ''),
      measured: `${fmt(measured.perSecond)} deliveries/s`,
      reference: `${fmt(base.perSecond)} deliveries/s: 1 worker, ${SHAPE_LABEL[measured.shape]}, same run`,
      ratio: measured.perSecond / base.perSecond,
    });
  });
  const ours = (drain: Drain) => sum(OURS.map((group) => drain.cpuMsPerDelivery[group] ?? 0));
  return {
    data: { scaleOut: { cores, workerCounts: SCALE_OUT_WORKERS, events, drains: drains.map((drain) => ({ ...drain, oursMsPerDelivery: ours(drain) })) } },
    rows,
    notes: [
      `Figure 10: this machine has ${cores} cores, shared by the workers, the web process (idle while a backlog drains), PostgreSQL, Redis, the receiver and the bench itself, so the curve flattens once the workers and what they use fill ${cores} cores; ` +
        `the CPU ms per delivery below (over the window once every worker had started, the same window as the CPU table's "scale-out" rows) is what predicts more cores: deliveries/s per core ≈ 1000 ÷ the service's CPU ms per delivery (workers + PostgreSQL + Redis). ` +
        `Services run with the engine figures' pacing (${Object.entries(ENGINE_ENV)
          .filter(([name]) => name !== 'DATABASE_POOL_SIZE')
          .map(([name, value]) => `${name}=${value}`)
          .join(', ')}) and DATABASE_POOL_SIZE=${POOL_SIZE} (4 workers and the web at 50 would exceed PostgreSQL's 100 connections; a drain during which PostgreSQL refused a connection is measured again). ` +
        `Workers start together; the first→last rate includes their start (the "once all were up" rate does not). ` +
        `BullMQ's keys share one hash tag (bullPrefix), so on the cluster the queues sit on one master; the pacer's keys spread.`,
      ...drains.map((drain) => `Figure 10, ${cpuNote(drain)}.`),
    ],
  };
}
