/**
 * Figure 5's partition series (issue 18 part 3): the engine's statements on the day-partitioned
 * deliveries and events (migration 7) at 100k delivery rows, then grown in place to 10M (and
 * 100M with BENCH_GROWTH_MAX_ROWS=100000000), always over the same DAYS day partitions, so that
 * only the rows per partition change. Claim, outcome, relay scan and log page should cost within
 * 1.3× of their cost at 100k: the claim and the outcome are judged against a second database
 * kept at 100k, measured in alternating rounds beside each grown size (claimsBeside.ts).
 * Retention drops whole days, so its time per day should not grow with the rows the table
 * holds: a day as big as the largest size's is also dropped from the smallest table, as the
 * reference for retention at the largest size.
 *
 * It runs on databases of its own (support/growthDatabase.ts: created, migrated and dropped),
 * through the service's own store (createStore over openPostgres), so it measures the service's
 * statements as they stand. Rows are placed in future days, where the day partitions made ahead are; the first
 * partition (everything before tomorrow) is dropped empty at the start.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR, type BenchContext } from '../context.js';
import { measureClaimsBeside } from '../measure/claimsBeside.js';
import { plansUsed } from '../measure/queryPlans.js';
import { measureRetention } from '../measure/retentionCost.js';
import {
  BATCH,
  measureClaimAndRecord,
  measurePages,
  measureRelayScan,
  newCosts,
  RELAY_BATCH,
  STATEMENTS,
  stats,
  WARM,
  type CostSession,
  type StatementKey,
  type Stats,
} from '../measure/statementCosts.js';
import { fmt, type FigureResult } from '../results.js';
import { SERVICE_DEFAULTS } from '../settings.js';
import { machineTicks } from '../support/cpu.js';
import { openGrowthDatabase, type GrowthDatabase } from '../support/growthDatabase.js';
import { addDaysAhead, DAYS, dayName, FILLER, growFiller, queueMeasured, type SeedingRecord } from '../support/partitionSeeding.js';
import { report, type Point } from './partitionGrowthReport.js';

/** The smallest store: every other size is judged against it. */
const BASE_ROWS = 100_000;
const GROWN_ROWS = [10_000_000, 100_000_000];
/** Days dropped at each size, each by its own dropBefore. */
const RETENTION_DAYS = 3;

/** Calls of each statement measured at each size. */
interface Reps {
  claimBatches: number;
  relayCalls: number;
  pages: number;
}

/** What the series runs on: the database grown in place, and the one kept at the smallest size beside it. */
interface Series {
  ctx: BenchContext;
  grown: GrowthDatabase;
  reference: GrowthDatabase | undefined;
  /** The largest size, when there is more than one: its days' size is dropped from the smallest table too. */
  largest: number | undefined;
  reps: Reps;
}

/** The sizes to measure: 100k, then 10M (and 100M when BENCH_GROWTH_MAX_ROWS allows), scaled by BENCH_SCALE. */
export function partitionGrowthSizes(scale: number, env: NodeJS.ProcessEnv = process.env) {
  const max = Number(env.BENCH_GROWTH_MAX_ROWS ?? '10000000');
  const grown = GROWN_ROWS.filter((rows) => rows <= max).map((rows) => Math.max(2 * BASE_ROWS, Math.round(rows * Math.min(1, scale))));
  return [BASE_ROWS, ...grown];
}

export async function partitionGrowth(ctx: BenchContext): Promise<FigureResult> {
  const sizes = partitionGrowthSizes(ctx.settings.scale);
  const scaled = (n: number, min: number) => Math.max(min, Math.round(n * Math.min(1, ctx.settings.scale)));
  const reps = { claimBatches: scaled(200, 30), relayCalls: scaled(100, 20), pages: scaled(400, 50) };
  ctx.progress(`figure 5 (partitions): sizes ${sizes.map((s) => fmt(s)).join(', ')} delivery rows over ${DAYS} day partitions`);
  const grown = await openGrowthDatabase(ctx, 'contact_hooks_growth');
  let reference: GrowthDatabase | undefined;
  try {
    if (sizes.length > 1) {
      ctx.progress(`  a second database kept at ${fmt(BASE_ROWS)} rows, measured beside each grown size`);
      reference = await openGrowthDatabase(ctx, 'contact_hooks_growth_reference');
      await growFiller(ctx, reference.seeders, reference.admin, reference.growth, BASE_ROWS);
    }
    return await measureSeries({ ctx, grown, reference, reps, largest: sizes.length > 1 ? sizes.at(-1) : undefined }, sizes);
  } finally {
    await reference?.close();
    await grown.close();
  }
}

/** Each size in turn: the filler grown to it, then the statements and retention measured there. */
async function measureSeries(series: Series, sizes: number[]): Promise<FigureResult> {
  const { ctx, grown } = series;
  const seeding: SeedingRecord[] = [];
  const points: Point[] = [];
  for (const [index, size] of sizes.entries()) {
    seeding.push(await growFiller(ctx, grown.seeders, grown.admin, grown.growth, size));
    points.push(await measureSize(series, size, index));
  }
  return report(points, seeding, writePlans(points), { baseRows: BASE_ROWS, retentionDays: RETENTION_DAYS });
}

/** The statements, then retention, at one size; `index` gives the size's measured deliveries a slot of their own. */
async function measureSize(series: Series, size: number, index: number): Promise<Point> {
  const { ctx, grown, reference, reps } = series;
  const { db, traced, seeders, admin, growth, hooks } = grown;
  const newest = growth.days.at(-1)!;
  // Fresh queued deliveries in the newest day, in a slot of their own at each size.
  const slot = newest + index * 3 * 3_600_000;
  const claimIds = await queueMeasured(seeders[0]!, growth, hooks.measuredHook, slot, (reps.claimBatches + WARM) * BATCH, false);
  await queueMeasured(seeders[0]!, growth, hooks.measuredHook, slot + 3_600_000, (reps.relayCalls + WARM) * RELAY_BATCH, true);
  await admin.query(`VACUUM ANALYZE deliveries_${dayName(newest)}, events_${dayName(newest)}`);
  const actualRows = growth.fillerRows + growth.measuredRows;

  const session: CostSession = { ctx, admin, traced, costs: newCosts() };
  const ticksBefore = machineTicks();
  await measureClaimAndRecord(session, claimIds);
  // The relay reads the days since DELIVERY_MAX_WAIT before now (src/workers/relay.ts); here "now" is in the newest day.
  await measureRelayScan(session, reps.relayCalls, newest - SERVICE_DEFAULTS.DELIVERY_MAX_WAIT);
  const middleDay = growth.days[Math.floor(growth.days.length / 2)]!;
  await measurePages(session, reps.pages, { hookId: hooks.fillerHook, accountId: FILLER, middleDay });
  const ticksAfter = machineTicks();
  const { samples, texts, plans, failures } = session.costs;
  const planCache = await plansUsed(
    db,
    STATEMENTS.map(({ key }) => key),
    texts,
  );
  const databaseBytes = Number((await admin.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]!.n);
  const machineBusy = (ticksAfter.busy - ticksBefore.busy) / Math.max(1, ticksAfter.total - ticksBefore.total);
  // Before retention drops the oldest days and new ones are added ahead: the same days as measured above.
  const beside = index > 0 && reference ? await measureClaimsBeside(ctx, reference, grown, index) : undefined;

  // What the relay leased is sent meanwhile, as far as retention is concerned.
  await admin.query(`UPDATE deliveries SET status = 'delivered' WHERE hook_id = $1 AND status IN ('queued', 'sending')`, [hooks.measuredHook]);
  const retention = await measureRetention(admin, traced, growth, RETENTION_DAYS);
  const bigDayRetention = index === 0 && series.largest !== undefined ? await dropBigDays(series, series.largest) : undefined;
  // As many days ahead again, empty until the next size fills them.
  await addDaysAhead(traced.store, growth, RETENTION_DAYS * (bigDayRetention ? 2 : 1));

  const statements = Object.fromEntries(Object.entries(samples).map(([key, us]) => [key, stats(us)])) as Record<StatementKey, Stats>;
  const point = { size, actualRows, statements, failures, retention, bigDayRetention, plans, planCache, machineBusy, databaseBytes, beside };
  logPoint(ctx, point);
  return point;
}

/**
 * Retention's reference for the largest size: its RETENTION_DAYS oldest days filled as a day of
 * `largest` is, in the small table, then dropped one by one. Dropping a day costs what its files
 * do; the same days among many more rows should cost the same.
 */
async function dropBigDays(series: Series, largest: number) {
  const { ctx } = series;
  const { seeders, admin, growth, traced } = series.grown;
  ctx.progress(`  retention's reference: the ${RETENTION_DAYS} oldest days filled as at ${fmt(largest)} rows, then dropped`);
  await growFiller(ctx, seeders, admin, growth, largest, growth.days.slice(0, RETENTION_DAYS));
  const tableRows = growth.fillerRows + growth.measuredRows;
  const records = await measureRetention(admin, traced, growth, RETENTION_DAYS);
  for (const r of records) ctx.progress(`  retention of ${fmt(r.rows)} deliveries from about ${fmt(tableRows)} rows: ${fmt(r.ms, 1)} ms`);
  return { records, tableRows };
}

function logPoint(ctx: BenchContext, { actualRows, statements, machineBusy, planCache, retention, databaseBytes, beside }: Point) {
  const line = STATEMENTS.map(({ key }) => `${key} ${fmt(statements[key].medianUs)} µs`).join(', ');
  ctx.progress(`  ${fmt(actualRows)} rows: ${line} (machine ${fmt(machineBusy * 100)}% busy meanwhile, this figure included)`);
  if (beside) {
    const pair = (key: 'claim' | 'record') => `${key} ${fmt(beside[key].grown.medianUs)} µs against ${fmt(beside[key].reference.medianUs)} µs`;
    ctx.progress(`  beside a database of ${fmt(beside.referenceRows)} rows, alternating rounds: ${pair('claim')}, ${pair('record')}`);
  }
  ctx.progress(
    `  plans (generic/custom, one connection): ${STATEMENTS.map(({ key }) => `${key} ${planCache[key] ? `${planCache[key].generic}/${planCache[key].custom}` : '?'}`).join(', ')}`,
  );
  for (const r of retention) {
    const parts = Object.entries(r.steps)
      .map(([step, ms]) => `${step} ${fmt(ms, 1)}`)
      .join(', ');
    ctx.progress(`  retention ${r.partitions.join(' + ')} (${fmt(r.rows)} deliveries): ${fmt(r.ms, 1)} ms = ${parts} ms`);
  }
  ctx.progress(`  database size ${fmt(databaseBytes / 2 ** 30, 1)} GiB`);
}

/** Every size's plans in one file beside the results: too long for the report. */
function writePlans(points: Point[]) {
  const plansFile = join(RESULTS_DIR, 'partition-growth-plans.txt');
  writeFileSync(
    plansFile,
    points.flatMap((point) => Object.entries(point.plans).map(([key, plan]) => `=== ${key} at ${fmt(point.actualRows)} delivery rows\n${plan}\n`)).join('\n'),
  );
  return plansFile;
}
