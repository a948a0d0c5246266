/**
 * `npm run bench`: every figure measured beside its reference in the same run. Prints markdown
 * tables and writes bench/results/latest.{json,md}, and the page with its charts (bench/page.ts):
 * docs/benchmarks.md after a full run, bench/results/benchmarks.md after a partial or shortened
 * one. Each figure lives in bench/figures/.
 *
 * Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a
 * fresh database is created and dropped) and Redis (BENCH_REDIS_URL, default
 * redis://127.0.0.1:6379; a unique QUEUE_PREFIX whose keys are deleted after).
 * BENCH_SCALE=0.3 shortens every measuring window (for trying changes out).
 * BENCH_ONLY=scaleOut runs that one figure alone (also embedded, with figure 2's stack beside it as its reference,
 * latency (with figure 2, whose peak sets its rate), fanOut, upsertsPglite, upsertsPostgres (BENCH_PG_SIZES=1000 for
 * figure 1 alone), pacedRateEmbedded, pacedRateWorkers, saturatedTarget, restartTime, eventsQueue: the figures that need nothing
 * from the others), e.g.
 * `BENCH_ONLY=scaleOut BENCH_SCALE=0.3 npm run bench`. BENCH_ONLY=partitionGrowth runs the
 * partitioned log's growth figure on its own database (BENCH_GROWTH_MAX_ROWS=100000000 adds 100M).
 */
import { randomUUID } from 'node:crypto';
import { sleep } from '../kit/waiting.js';
import { openContext, RESULTS_DIR, type BenchContext } from './context.js';
import { backlog } from './figures/backlog.js';
import { deliveryGrowth } from './figures/deliveryGrowth.js';
import { deliveryThroughput } from './figures/deliveryThroughput.js';
import { embedded } from './figures/embedded.js';
import { eventsQueue } from './figures/eventsQueue.js';
import { fanOut } from './figures/fanOut.js';
import { latency, PEAK_SHARES, type LatencyRate } from './figures/latency.js';
import { pacedRateEmbedded, pacedRateWorkers } from './figures/pacedRate.js';
import { partitionGrowth } from './figures/partitionGrowth.js';
import { restartTime } from './figures/restartTime.js';
import { saturatedTarget } from './figures/saturatedTarget.js';
import { scaleOut } from './figures/scaleOut.js';
import { upsertsPglite } from './figures/upsertsPglite.js';
import { upsertsPostgres } from './figures/upsertsPostgres.js';
import { endToEndThroughput } from './measure/deliveries.js';
import { writeReport } from './report.js';
import { fmt, type BenchResults, type FigureResult } from './results.js';
import { benchSettings, ENGINE_ENV, PACED_WORKERS, SERVICE_DEFAULTS, UPSERT_CONNECTIONS, UPSERTS_ALONE_LATENCY_RATE } from './settings.js';
import { createCpuMeter } from './support/cpu.js';
import { describeEnvironment, waitForQuiet } from './support/environment.js';
import { memoryByGroup } from './support/memory.js';
import type { Services } from './support/services.js';
import { startPostgresStack, type PostgresStack } from './support/stacks.js';

const NOTES = [
  'Figures 3 and 5: latency is receipt at the receiver (its own process) minus the scheduled send time of the ingesting POST, both on CLOCK_MONOTONIC; open-loop pacing, so a slow response never delays the next send.',
  "Growth: contacts are seeded with INSERT … SELECT generate_series in one account, then VACUUM ANALYZE and CHECKPOINT (autovacuum is off on this server); subscriptions are other event types of the same account and other accounts' hooks, inserted directly; only one matches the measured event.",
  "Figure 7: the achieved rate is (receipts − 1) ÷ (last − first receipt); the busiest second is the most receipts within any 1,000 ms (sliding), as a receiver counting its own limit would see them. The pacer spaces departure times 1000/limit ms apart; arrivals add each POST's own delay (timers, event loop, TLS), so at exactly the limit a few ms of jitter put limit + 1 into some second.",
  "Figure 8: B's throughput is from its first call sent to its last delivery received, each round with a fresh account B (its own per-host budget); A's backlog is fully fanned out (every delivery queued as a delayed job) before the rounds beside it start, and A's rate is its receipts during each round.",
];

/** Web + 1 worker on PostgreSQL and Redis, pacing raised out of the way: the engine figures' stack. */
const startEngineStack = (ctx: BenchContext) =>
  startPostgresStack(ctx, ENGINE_ENV, { web: 'web (PostgreSQL + Redis)', worker: 'worker (PostgreSQL + Redis)' }, 1);

/**
 * The embedded figure's reference: figure 2's stack (web + 1 worker) started afresh, `events`
 * calls end to end after a warm-up, each time to an account of its own.
 */
async function engineThroughput(ctx: BenchContext, events: number) {
  const engine = await startEngineStack(ctx);
  try {
    const target = { accountId: `reference-${randomUUID()}`, channel: '/r' };
    await engine.client.subscribe(await engine.client.newKey(target.accountId), 'new_conversation', `${ctx.receiver.url}${target.channel}`);
    await endToEndThroughput(ctx, engine.web.url, target, 300);
    return (await endToEndThroughput(ctx, engine.web.url, target, events)).perSecond;
  } finally {
    await engine.stop();
  }
}

/** Web + PACED_WORKERS workers on PostgreSQL and Redis, with the service's default pacing. */
const startPacedStack = (ctx: BenchContext) =>
  startPostgresStack(ctx, {}, { web: 'web (PostgreSQL + Redis, default pacing)', worker: 'worker (PostgreSQL + Redis, default pacing)' }, PACED_WORKERS);

/** A figure that runs on the paced stack, on a stack of its own. */
const onPacedStack =
  (figure: (ctx: BenchContext, paced: PostgresStack) => Promise<FigureResult>) =>
  async (ctx: BenchContext): Promise<FigureResult> => {
    const paced = await startPacedStack(ctx);
    try {
      return await figure(ctx, paced);
    } finally {
      await paced.stop();
    }
  };

/** Figure 7 in the production shape, and figure 8, each on a stack of its own. */
const pacedRateWorkersAlone = onPacedStack((ctx, paced) => pacedRateWorkers(ctx, paced.web.url, PACED_WORKERS));
const saturatedTargetAlone = onPacedStack(saturatedTarget);

/** The embedded figure, with figure 2's stack measured just before and after it as its reference. */
const embeddedBesideEngine = (ctx: BenchContext) => embedded(ctx, (events) => engineThroughput(ctx, events));

/** Figure 3's rates: a quarter and half of figure 2's peak, unless BENCH_LATENCY_RATE fixes one. */
const latencyRate = (ctx: BenchContext, peakPerSecond: number): LatencyRate =>
  ctx.settings.latencyRate === undefined
    ? { perSecond: PEAK_SHARES.map((share) => Math.max(10, Math.round(peakPerSecond * share))), ofThePeak: true }
    : { perSecond: [ctx.settings.latencyRate], ofThePeak: false };

/** Figure 3 (and 5's subscriptions series) at shares of the peak of figure 2, measured first on the same stack (or at BENCH_LATENCY_RATE). */
async function latencyAlone(ctx: BenchContext): Promise<FigureResult> {
  const engine = await startEngineStack(ctx);
  const deliver = { accountId: 'deliver', channel: '/d' };
  try {
    await engine.client.subscribe(await engine.client.newKey(deliver.accountId), 'new_conversation', `${ctx.receiver.url}${deliver.channel}`);
    const throughput = await deliveryThroughput(ctx, engine, deliver.accountId, deliver.channel);
    const measured = await latency(ctx, engine, deliver.accountId, deliver.channel, latencyRate(ctx, throughput.perSecond));
    return { ...measured, rows: [...throughput.rows, ...measured.rows] };
  } finally {
    await engine.stop();
  }
}

/** Figure 4 on an engine stack of its own. */
async function fanOutAlone(ctx: BenchContext): Promise<FigureResult> {
  const engine = await startEngineStack(ctx);
  try {
    return await fanOut(ctx, engine);
  } finally {
    await engine.stop();
  }
}

/**
 * Figure 1 and 5's contacts series on an engine stack of its own. Figure 2 does not run first, so
 * their new-contact latency is measured at a fixed rate rather than at half its peak.
 */
async function upsertsPostgresAlone(ctx: BenchContext): Promise<FigureResult> {
  const engine = await startEngineStack(ctx);
  try {
    return await upsertsPostgres(ctx, engine, UPSERTS_ALONE_LATENCY_RATE);
  } finally {
    await engine.stop();
  }
}

/** What BENCH_ONLY may name: figures that need nothing from those before them. */
const ALONE: Record<string, (ctx: BenchContext) => Promise<FigureResult>> = {
  scaleOut,
  embedded: embeddedBesideEngine,
  latency: latencyAlone,
  fanOut: fanOutAlone,
  upsertsPglite,
  upsertsPostgres: upsertsPostgresAlone,
  pacedRateEmbedded,
  pacedRateWorkers: pacedRateWorkersAlone,
  saturatedTarget: saturatedTargetAlone,
  restartTime,
  partitionGrowth,
  eventsQueue: (ctx) => eventsQueue(ctx),
};

/** The memory chart's groups: web processes by their store, and workers. */
function memoryGroups(started: ReturnType<Services['started']>) {
  const groups = new Map(
    started.map(({ entry, label, pid }) => [pid, entry === 'worker' ? 'workers' : label.includes('PGlite') ? 'embedded web (PGlite)' : 'web on PostgreSQL']),
  );
  return (pid: number) => groups.get(pid);
}

/** The figures in the order they run, each handed what it needs from those before it. */
async function runFigures(ctx: BenchContext): Promise<FigureResult[]> {
  const results: FigureResult[] = [];
  const engine = await startEngineStack(ctx);
  const deliver = { accountId: 'deliver', channel: '/d' };
  await engine.client.subscribe(await engine.client.newKey(deliver.accountId), 'new_conversation', `${ctx.receiver.url}${deliver.channel}`);
  const throughput = await deliveryThroughput(ctx, engine, deliver.accountId, deliver.channel);
  const rate = latencyRate(ctx, throughput.perSecond);
  results.push(throughput);
  results.push(await latency(ctx, engine, deliver.accountId, deliver.channel, rate));
  results.push(await fanOut(ctx, engine));
  results.push(await backlog(ctx, engine));
  results.push(await deliveryGrowth(ctx, engine, deliver, throughput.perSecond));
  results.push(await upsertsPostgres(ctx, engine, rate.perSecond.at(-1)!));
  await engine.stop();
  results.push(await eventsQueue(ctx, throughput.perSecond));
  results.push(await scaleOut(ctx));

  const paced = await startPacedStack(ctx);
  results.push(await pacedRateWorkers(ctx, paced.web.url, PACED_WORKERS));
  results.push(await saturatedTarget(ctx, paced));
  await paced.stop();

  results.push(await embeddedBesideEngine(ctx));
  results.push(await upsertsPglite(ctx));
  results.push(await pacedRateEmbedded(ctx));
  results.push(await restartTime(ctx));
  results.push(await partitionGrowth(ctx));
  return results;
}

async function main() {
  const only = process.env.BENCH_ONLY;
  const alone = only ? ALONE[only] : undefined;
  if (only && !alone) throw new Error(`BENCH_ONLY=${only}: not one of ${Object.keys(ALONE).join(', ')}`);
  const settings = benchSettings();
  const started = performance.now();
  const cpu = createCpuMeter();
  const environment = await describeEnvironment(settings.adminUrl, settings.redisUrl);
  const foreign = await waitForQuiet(cpu.pids, settings.waitIdleMs, (message) => process.stderr.write(`[bench] ${message}\n`));
  const startedAt = new Date().toISOString();
  const ctx = await openContext(settings, cpu);
  process.on('SIGINT', () => {
    ctx.services.killAll();
    process.exit(130);
  });
  let figures: FigureResult[];
  try {
    figures = alone ? [await alone(ctx)] : await runFigures(ctx);
  } finally {
    await ctx.close();
  }
  const byFigure = (row: { figure: string }) => Number.parseInt(row.figure, 10);
  const results: BenchResults = {
    startedAt,
    environment: { ...environment, otherLoadAtStart: `${fmt(foreign * 100)}%` },
    settings: {
      upsertConnections: UPSERT_CONNECTIONS,
      deliveryConcurrency: SERVICE_DEFAULTS.DELIVERY_CONCURRENCY,
      engineFigures: ENGINE_ENV,
      pacedFigures: {
        DELIVERY_RATE_PER_TARGET: SERVICE_DEFAULTS.DELIVERY_RATE_PER_TARGET,
        DELIVERY_BUDGET_PER_HOST: SERVICE_DEFAULTS.DELIVERY_BUDGET_PER_HOST,
        workers: PACED_WORKERS,
      },
      logLevel: 'info (to a file)',
      scale: settings.scale,
      only: only ?? 'every figure',
      durationsMs: settings.durations,
    },
    figures: Object.fromEntries(figures.flatMap((figure) => Object.entries(figure.data))),
    rows: figures.flatMap((figure) => figure.rows).sort((a, b) => byFigure(a) - byFigure(b)),
    growth: figures.flatMap((figure) => figure.growth ?? []),
    memory: ctx.services.memory(),
    memoryOverRun: memoryByGroup(ctx.memory.ticks(), memoryGroups(ctx.services.started())),
    cpu: cpu.rows(),
    notes: [
      ...(foreign > 0.1
        ? [`WARNING: other processes used ${fmt(foreign * 100)}% of the CPU when the run started; figures are skewed (see the "other" column).`]
        : []),
      ...figures.flatMap((figure) => figure.notes ?? []),
      ...NOTES,
    ],
    totalSeconds: Math.round((performance.now() - started) / 1000),
  };
  writeReport(RESULTS_DIR, results, settings);
}

await main();
await sleep(0);
process.exit(0);
