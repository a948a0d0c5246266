/**
 * The partition growth figure's database: its accounts and hooks, the day partitions that hold
 * its rows, and seeding them fast (INSERT … SELECT generate_series straight into each day's
 * partitions, then VACUUM ANALYZE and CHECKPOINT).
 */
import type pg from 'pg';
import { deliveryIdAt } from '../../src/storage/deliveryIds.js';
import type { Store } from '../../src/storage/store.js';
import type { BenchContext } from '../context.js';
import { fmt } from '../results.js';
import { insertHooks, insertKeyRow, type Run } from './seeding.js';

export const DAY = 86_400_000;
/** Day partitions holding rows at every size (days dropped by retention are replaced by new ones ahead). */
export const DAYS = 30;
/** Filler deliveries per event: every event of the filler account goes to its FANOUT hooks. */
export const FANOUT = 10;
export const FILLER = 'growth-filler';
export const MEASURED = 'growth-measured';
/** Seeding connections working on different days at once. */
export const SEEDERS = 2;
/** Events per seeding statement (× FANOUT deliveries). */
const CHUNK_EVENTS = 20_000;

/** A day partition's suffix: deliveries_20260101 holds that day. */
export const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

/** The days holding rows and what they hold, kept as seeding and retention change them. */
export interface GrowthDays {
  /** Midnight (epoch ms) of the day the series started on: the days holding rows are all after it. */
  today: number;
  /** The days holding rows, oldest first (epoch ms of their midnights). */
  days: number[];
  /** Filler events in each day. */
  eventsIn: Map<number, number>;
  fillerRows: number;
  measuredRows: number;
}

export interface SeedingRecord {
  size: number;
  rowsAdded: number;
  seconds: number;
  rowsPerSecond: number;
  vacuumSeconds: number;
}

/** One seeding statement's events: `count` of them in `day`, from `from`, `stepMs` apart. */
interface Chunk {
  day: number;
  from: number;
  stepMs: number;
  count: number;
}

/** The filler account with its FANOUT hooks and the measured account with one; returns a hook of each. */
export async function seedAccounts(run: Run) {
  const fillerKey = await insertKeyRow(run, FILLER);
  await insertHooks(run, fillerKey, FILLER, 'missed_call', 'https://filler.example/h', FANOUT);
  const measuredKey = await insertKeyRow(run, MEASURED);
  await insertHooks(run, measuredKey, MEASURED, 'new_contact', 'https://measured.example/h', 1);
  const hookOf = async (account: string) =>
    ((await run('SELECT id FROM hooks WHERE account_id = $1 ORDER BY target_url LIMIT 1', [account])).rows[0] as { id: string }).id;
  return { fillerHook: await hookOf(FILLER), measuredHook: await hookOf(MEASURED) };
}

/** Makes the DAYS day partitions after today, empty, and drops the first partition (everything before tomorrow). */
export async function prepareDays(store: Store): Promise<GrowthDays> {
  const today = Math.floor((await store.partitions.now()) / DAY) * DAY;
  // The first partition holds everything before tomorrow, here nothing: gone, so that each
  // dropBefore of the series drops exactly one day.
  await store.partitions.dropBefore(today + DAY);
  await store.partitions.ensure(DAYS);
  const days = Array.from({ length: DAYS }, (_, i) => today + (i + 1) * DAY);
  return { today, days, eventsIn: new Map(), fillerRows: 0, measuredRows: 0 };
}

/** The seeding statements that bring each of `days` to `perDay` filler events. */
function chunksToReach(growth: GrowthDays, perDay: number, days: number[]) {
  const chunks: Chunk[] = [];
  for (const day of days) {
    const missing = perDay - (growth.eventsIn.get(day) ?? 0);
    if (missing <= 0) continue;
    // Each chunk covers its own slice of the day in time order, so the indexes led by time
    // take its rows in one place rather than all over.
    const pieces = Math.ceil(missing / CHUNK_EVENTS);
    for (let i = 0; i < pieces; i++) {
      const count = Math.floor(missing / pieces) + (i < missing % pieces ? 1 : 0);
      chunks.push({ day, from: day + (i * DAY) / pieces, stepMs: DAY / pieces / count, count });
    }
  }
  return chunks;
}

/** One chunk's filler events and their FANOUT deliveries each, written into its day's partitions. */
async function writeChunk(seeder: pg.Client, chunk: Chunk) {
  const name = dayName(chunk.day);
  const { rowCount } = await seeder.query(
    `WITH fired AS (
       INSERT INTO events_${name} (id, account_id, event_type, data, created_at)
       SELECT ${deliveryIdAt('t.at')}, $1, 'missed_call', '{}', t.at
       FROM (SELECT $2::timestamptz + make_interval(secs => (g + random()) * $3::float8 / 1000) AS at
             FROM generate_series(0, $4::int - 1) AS g) t
       RETURNING id, created_at)
     INSERT INTO deliveries_${name} (id, event_id, hook_id, account_id, status, response_status, duration_ms, queued_at, attempted_at)
     SELECT ${deliveryIdAt('fired.created_at')}, fired.id, h.id, $1, 'delivered', 200, 5, fired.created_at, fired.created_at + interval '5 milliseconds'
     FROM fired CROSS JOIN (SELECT id FROM hooks WHERE account_id = $1) h`,
    [FILLER, new Date(chunk.from).toISOString(), chunk.stepMs, chunk.count],
  );
  if (rowCount !== chunk.count * FANOUT) throw new Error(`seeding wrote ${rowCount} rows, not ${chunk.count * FANOUT}`);
  return rowCount;
}

/**
 * Adds filler deliveries (and their events) until each of `days` (every live day unless told)
 * holds size ÷ DAYS of them, as at `size`, then vacuums.
 */
export async function growFiller(
  ctx: BenchContext,
  seeders: pg.Client[],
  admin: pg.Client,
  growth: GrowthDays,
  size: number,
  days: number[] = growth.days,
): Promise<SeedingRecord> {
  const chunks = chunksToReach(growth, Math.ceil(size / FANOUT / DAYS), days);
  const total = chunks.reduce((sum, c) => sum + c.count, 0) * FANOUT;
  ctx.progress(`  seeding ${fmt(total)} delivery rows (${fmt(chunks.length)} statements, ${SEEDERS} connections) to reach ${fmt(size)}`);
  const started = performance.now();
  let written = 0;
  let reported = started;
  let next = 0;
  await Promise.all(
    seeders.map(async (seeder) => {
      for (let chunk = chunks[next++]; chunk; chunk = chunks[next++]) {
        const rowCount = await writeChunk(seeder, chunk);
        growth.eventsIn.set(chunk.day, (growth.eventsIn.get(chunk.day) ?? 0) + chunk.count);
        written += rowCount;
        growth.fillerRows += rowCount;
        const now = performance.now();
        if (now - reported > 10_000) {
          reported = now;
          ctx.progress(`    ${fmt(written)} / ${fmt(total)} rows, ${fmt(written / ((now - started) / 1000))} rows/s`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  ctx.progress(`  seeded ${fmt(written)} rows in ${fmt(seconds, 1)} s: ${fmt(written / seconds)} rows/s; VACUUM ANALYZE, CHECKPOINT`);
  const vacuumSeconds = await vacuumAndCheckpoint(admin);
  ctx.progress(`  vacuumed and checkpointed in ${fmt(vacuumSeconds, 1)} s`);
  return { size, rowsAdded: written, seconds, rowsPerSecond: written / seconds, vacuumSeconds };
}

/** Seeded rows get their statistics and visibility map, and their writes flushed, before anything is timed; returns the seconds taken. */
async function vacuumAndCheckpoint(admin: pg.Client) {
  const started = performance.now();
  await admin.query('VACUUM ANALYZE deliveries');
  await admin.query('VACUUM ANALYZE events');
  await admin.query('CHECKPOINT');
  return (performance.now() - started) / 1000;
}

/**
 * `count` queued deliveries of the measured hook (and their events) from `at`, 10 ms apart;
 * ids in queued order. Overdue ones are due for the relay now, the others in a day.
 */
export async function queueMeasured(seeder: pg.Client, growth: GrowthDays, measuredHook: string, at: number, count: number, overdue: boolean) {
  const { rows } = await seeder.query<{ id: string }>(
    `WITH fired AS (
       INSERT INTO events (id, account_id, event_type, data, created_at)
       SELECT ${deliveryIdAt('t.at')}, $1, 'new_contact', '{"contact":{"phone":"+14155550100","name":"Bench"}}', t.at
       FROM (SELECT $2::timestamptz + make_interval(secs => g * 0.01) AS at FROM generate_series(0, $3::int - 1) AS g) t
       RETURNING id, created_at)
     INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
     SELECT ${deliveryIdAt('fired.created_at')}, fired.id, $4, $1, 'queued', fired.created_at,
       CASE WHEN $5 THEN clock_timestamp() - interval '1 hour' + (fired.created_at - $2::timestamptz) ELSE clock_timestamp() + interval '1 day' END
     FROM fired RETURNING id`,
    [MEASURED, new Date(at).toISOString(), count, measuredHook, overdue],
  );
  growth.measuredRows += rows.length;
  return rows.map((row) => row.id).sort();
}

/** Forgets the oldest day, dropped by retention with its `rows` filler deliveries. */
export function retireOldestDay(growth: GrowthDays, rows: number) {
  const oldest = growth.days.shift()!;
  growth.eventsIn.delete(oldest);
  growth.fillerRows -= rows;
}

/** `count` more days ahead, empty until the next size fills them. */
export async function addDaysAhead(store: Store, growth: GrowthDays, count: number) {
  const ahead = growth.days.at(-1)! + count * DAY;
  await store.partitions.ensure(Math.round((ahead - growth.today) / DAY));
  for (let day = growth.days.at(-1)! + DAY; day <= ahead; day += DAY) growth.days.push(day);
}
