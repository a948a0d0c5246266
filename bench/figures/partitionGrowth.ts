/**
 * Figure 5's partition series (issue 18 part 3): the engine's statements on the day-partitioned
 * deliveries and events (migration 7) at 100k delivery rows, then grown in place to 10M (and
 * 100M with BENCH_GROWTH_MAX_ROWS=100000000), always over the same DAYS day partitions, so that
 * only the rows per partition change. Claim, outcome, relay scan and log page should cost within
 * 1.3× of their cost at 100k; retention drops whole days, so its time per day should not grow
 * with the rows a day holds.
 *
 * It runs on a database of its own (created, migrated and dropped here), through the service's
 * own store (createStore over openPostgres), so it measures the service's statements as they
 * stand. Rows are placed in future days, where the day partitions made ahead are; the first
 * partition (everything before tomorrow) is dropped empty at the start.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { createDatabase } from '../../kit/databases.js';
import { summarize } from '../../kit/statistics.js';
import { openPostgres, type Database, type Sql } from '../../src/storage/database.js';
import { deliveryIdAt, queuedRange } from '../../src/storage/deliveryIds.js';
import { migrate } from '../../src/storage/migrate.js';
import { createStore, type Store } from '../../src/storage/store.js';
import { RESULTS_DIR, type BenchContext } from '../context.js';
import { fmt, growthRows, ratioRow, type FigureResult, type GrowthRow, type Row } from '../results.js';
import { SERVICE_DEFAULTS } from '../settings.js';
import { insertHooks, insertKeyRow } from '../support/seeding.js';

const DAY = 86_400_000;
/** The smallest store: every other size is judged against it. */
const BASE_ROWS = 100_000;
const GROWN_ROWS = [10_000_000, 100_000_000];
/** Day partitions holding rows at every size (days dropped by retention are replaced by new ones ahead). */
const DAYS = 30;
/** Filler deliveries per event: every event of the filler account goes to its FANOUT hooks. */
const FANOUT = 10;
const FILLER = 'growth-filler';
const MEASURED = 'growth-measured';
/** Deliveries per claim and per outcome statement (a worker's batch). */
const BATCH = 50;
/** takeOverdue's batch, as the relay asks. */
const RELAY_BATCH = 100;
const LOG_LIMIT = 100;
/** Calls of each statement run before the measured ones (prepared statements, plans, caches). */
const WARM = 10;
/** Days dropped at each size, each by its own dropBefore. */
const RETENTION_DAYS = 3;
/** A statement whose calls grow slow stops being repeated past this, with at least MIN_SAMPLES measured. */
const BUDGET_MS = 90_000;
const MIN_SAMPLES = 5;
/** Outcomes that never disable the hook. */
const RULE = { afterMs: DAY, minFailures: 1_000_000 };
/** Events per seeding statement (× FANOUT deliveries). */
const CHUNK_EVENTS = 20_000;
/** Seeding connections working on different days at once. */
const SEEDERS = 2;
const STORE_POOL = 4;

const silentLog = pino({ level: 'silent' });
const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
/** A LogPosition's time: PostgreSQL's microsecond text, as the delivery log's cursors carry it. */
const positionText = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

interface Stats {
  n: number;
  medianUs: number;
  meanUs: number;
  p99Us: number;
}
/** The machine's CPU time so far, busy and total, in clock ticks (/proc/stat): other work skews the figures. */
function cpuTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

const stats = (us: number[]): Stats => {
  const s = summarize(us);
  return { n: s.n, medianUs: s.p50, meanUs: us.reduce((a, b) => a + b, 0) / Math.max(1, us.length), p99Us: s.p99 };
};

/** What is measured at each size, in the order of the report. */
const STATEMENTS = [
  { key: 'claim', what: `claim (batch of ${BATCH} queued)` },
  { key: 'record', what: `outcome (record, batch of ${BATCH})` },
  { key: 'takeOverdue', what: `relay scan (takeOverdue ${RELAY_BATCH})` },
  { key: 'pageHook', what: `log page, hook, newest ${LOG_LIMIT}` },
  { key: 'pageAccount', what: `log page, account, newest ${LOG_LIMIT}` },
  { key: 'pageDay', what: `log page, hook, since/until one day` },
  { key: 'pageDeep', what: `log page, hook, after a cursor ${DAYS / 2} days back` },
] as const;
type StatementKey = (typeof STATEMENTS)[number]['key'];

interface Point {
  size: number;
  /** Delivery rows in the table while the statements were measured. */
  actualRows: number;
  statements: Record<StatementKey, Stats>;
  failures: Partial<Record<StatementKey, string>>;
  retention: { partitions: string[]; rows: number; ms: number; steps: Record<string, number> }[];
  /** Share of the machine's CPU busy while the statements were measured (ours included: Node and one backend, about one core). */
  machineBusy: number;
  databaseBytes: number;
  /** Generic and custom plans the server used for each statement on one of the store's connections. */
  planCache: Record<string, { generic: number; custom: number } | undefined>;
  /** EXPLAIN (ANALYZE, BUFFERS) of each statement at this size (custom plans: parameters bound). */
  plans: Record<string, string>;
}

/** The sizes to measure: 100k, then 10M (and 100M when BENCH_GROWTH_MAX_ROWS allows), scaled by BENCH_SCALE. */
export function partitionGrowthSizes(scale: number, env: NodeJS.ProcessEnv = process.env) {
  const max = Number(env.BENCH_GROWTH_MAX_ROWS ?? '10000000');
  const grown = GROWN_ROWS.filter((rows) => rows <= max).map((rows) => Math.max(2 * BASE_ROWS, Math.round(rows * Math.min(1, scale))));
  return [BASE_ROWS, ...grown];
}

/** Drops the database even when the run is interrupted (run.ts exits at once on SIGINT). */
function dropOnInterrupt(adminUrl: string, name: string) {
  const handler = () => {
    spawnSync('psql', ['-d', adminUrl, '-q', '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: 'ignore', timeout: 10_000 });
  };
  process.prependListener('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

export async function partitionGrowth(ctx: BenchContext): Promise<FigureResult> {
  const sizes = partitionGrowthSizes(ctx.settings.scale);
  const scaled = (n: number, min: number) => Math.max(min, Math.round(n * Math.min(1, ctx.settings.scale)));
  const reps = { claimBatches: scaled(200, 30), relayCalls: scaled(100, 20), pages: scaled(400, 50) };
  ctx.progress(`figure 5 (partitions): sizes ${sizes.map((s) => fmt(s)).join(', ')} delivery rows over ${DAYS} day partitions`);
  const database = await createDatabase(ctx.settings.adminUrl, 'contact_hooks_growth');
  const forget = dropOnInterrupt(ctx.settings.adminUrl, database.name);
  const clients: pg.Client[] = [];
  let db: Database | undefined;
  try {
    db = openPostgres(database.url, { max: STORE_POOL, log: silentLog });
    await migrate(db);
    const client = async (setup: string[]) => {
      const c = new pg.Client({ connectionString: database.url });
      clients.push(c);
      await c.connect();
      for (const statement of setup) await c.query(statement);
      return c;
    };
    // Seeding writes rows valid by construction: no foreign-key trigger per row, no wait for each commit's flush.
    const seeders = await Promise.all(Array.from({ length: SEEDERS }, () => client(['SET session_replication_role = replica', 'SET synchronous_commit = off'])));
    const admin = await client([]);
    return await measureSeries(ctx, db, seeders, admin, sizes, reps);
  } finally {
    for (const c of clients) await c.end().catch(() => {});
    await db?.close().catch(() => {});
    await database.drop();
    forget();
    ctx.progress(`  dropped database ${database.name}`);
  }
}

async function measureSeries(
  ctx: BenchContext,
  db: Database,
  seeders: pg.Client[],
  admin: pg.Client,
  sizes: number[],
  reps: { claimBatches: number; relayCalls: number; pages: number },
): Promise<FigureResult> {
  // The store over a database that remembers the last statement it ran, to EXPLAIN it as sent.
  // While `trace` is set, it gets the time of each statement run (retention's, step by step).
  let last: { text: string; params: unknown[] } = { text: '', params: [] };
  let trace: { text: string; ms: number }[] | undefined;
  const traced = (sql: Sql): Sql => ({
    query: async <Row>(text: string, params?: unknown[]) => {
      last = { text, params: params ?? [] };
      const started = performance.now();
      try {
        return await sql.query<Row>(text, params);
      } finally {
        trace?.push({ text, ms: performance.now() - started });
      }
    },
    exec: async (text: string) => {
      const started = performance.now();
      try {
        await sql.exec(text);
      } finally {
        trace?.push({ text, ms: performance.now() - started });
      }
    },
  });
  const tapped: Database = { ...db, ...traced(db), transaction: (work) => db.transaction((tx) => work(traced(tx))) };
  const store = createStore(tapped);
  const run = (text: string, params?: unknown[]) => db.query(text, params);

  const fillerKey = await insertKeyRow(run, FILLER);
  await insertHooks(run, fillerKey, FILLER, 'missed_call', 'https://filler.example/h', FANOUT);
  const measuredKey = await insertKeyRow(run, MEASURED);
  await insertHooks(run, measuredKey, MEASURED, 'new_contact', 'https://measured.example/h', 1);
  const hookOf = async (account: string) =>
    (await db.query<{ id: string }>('SELECT id FROM hooks WHERE account_id = $1 ORDER BY target_url LIMIT 1', [account])).rows[0]!.id;
  const fillerHook = await hookOf(FILLER);
  const measuredHook = await hookOf(MEASURED);

  const today = Math.floor((await store.partitions.now()) / DAY) * DAY;
  // The first partition holds everything before tomorrow, here nothing: gone, so that each
  // dropBefore below drops exactly one day.
  await store.partitions.dropBefore(today + DAY);
  await store.partitions.ensure(DAYS);
  /** The days holding rows, oldest first (epoch ms of their midnights), and the filler events in each. */
  const days = Array.from({ length: DAYS }, (_, i) => today + (i + 1) * DAY);
  const eventsIn = new Map<number, number>();
  let fillerRows = 0;
  let measuredRows = 0;
  const seeding: { size: number; rowsAdded: number; seconds: number; rowsPerSecond: number; vacuumSeconds: number }[] = [];

  /** Adds filler deliveries (and their events) until every live day holds size ÷ DAYS of them. */
  async function grow(size: number) {
    const perDay = Math.ceil(size / FANOUT / DAYS);
    const chunks: { day: number; from: number; stepMs: number; count: number }[] = [];
    for (const day of days) {
      const missing = perDay - (eventsIn.get(day) ?? 0);
      if (missing <= 0) continue;
      // Each chunk covers its own slice of the day in time order, so the indexes led by time
      // take its rows in one place rather than all over.
      const pieces = Math.ceil(missing / CHUNK_EVENTS);
      for (let i = 0; i < pieces; i++) {
        const count = Math.floor(missing / pieces) + (i < missing % pieces ? 1 : 0);
        chunks.push({ day, from: day + (i * DAY) / pieces, stepMs: DAY / pieces / count, count });
      }
    }
    const total = chunks.reduce((sum, c) => sum + c.count, 0) * FANOUT;
    ctx.progress(`  seeding ${fmt(total)} delivery rows (${fmt(chunks.length)} statements, ${SEEDERS} connections) to reach ${fmt(size)}`);
    const started = performance.now();
    let written = 0;
    let reported = started;
    let next = 0;
    await Promise.all(
      seeders.map(async (seeder) => {
        for (let chunk = chunks[next++]; chunk; chunk = chunks[next++]) {
          const name = dayName(chunk.day);
          const { rowCount } = await seeder.query(
            `WITH fired AS (
               INSERT INTO events_${name} (id, account_id, event_type, data, created_at, dispatched_at)
               SELECT ${deliveryIdAt('t.at')}, $1, 'missed_call', '{}', t.at, t.at
               FROM (SELECT $2::timestamptz + make_interval(secs => (g + random()) * $3::float8 / 1000) AS at
                     FROM generate_series(0, $4::int - 1) AS g) t
               RETURNING id, created_at)
             INSERT INTO deliveries_${name} (id, event_id, hook_id, account_id, status, response_status, duration_ms, queued_at, attempted_at)
             SELECT ${deliveryIdAt('fired.created_at')}, fired.id, h.id, $1, 'delivered', 200, 5, fired.created_at, fired.created_at + interval '5 milliseconds'
             FROM fired CROSS JOIN (SELECT id FROM hooks WHERE account_id = $1) h`,
            [FILLER, new Date(chunk.from).toISOString(), chunk.stepMs, chunk.count],
          );
          if (rowCount !== chunk.count * FANOUT) throw new Error(`seeding wrote ${rowCount} rows, not ${chunk.count * FANOUT}`);
          eventsIn.set(chunk.day, (eventsIn.get(chunk.day) ?? 0) + chunk.count);
          written += rowCount;
          fillerRows += rowCount;
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
    const vacuumStarted = performance.now();
    await admin.query('VACUUM ANALYZE deliveries');
    await admin.query('VACUUM ANALYZE events');
    await admin.query('CHECKPOINT');
    const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
    ctx.progress(`  vacuumed and checkpointed in ${fmt(vacuumSeconds, 1)} s`);
    seeding.push({ size, rowsAdded: written, seconds, rowsPerSecond: written / seconds, vacuumSeconds });
  }

  /** `count` queued deliveries of the measured hook (and their events) in `day` from `at`, 10 ms apart; ids in queued order. */
  async function queue(at: number, count: number, overdue: boolean) {
    const { rows } = await seeders[0]!.query<{ id: string }>(
      `WITH fired AS (
         INSERT INTO events (id, account_id, event_type, data, created_at, dispatched_at)
         SELECT ${deliveryIdAt('t.at')}, $1, 'new_contact', '{"contact":{"phone":"+14155550100","name":"Bench"}}', t.at, t.at
         FROM (SELECT $2::timestamptz + make_interval(secs => g * 0.01) AS at FROM generate_series(0, $3::int - 1) AS g) t
         RETURNING id, created_at)
       INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
       SELECT ${deliveryIdAt('fired.created_at')}, fired.id, $4, $1, 'queued', fired.created_at,
         CASE WHEN $5 THEN clock_timestamp() - interval '1 hour' + (fired.created_at - $2::timestamptz) ELSE clock_timestamp() + interval '1 day' END
       FROM fired RETURNING id`,
      [MEASURED, new Date(at).toISOString(), count, measuredHook, overdue],
    );
    measuredRows += rows.length;
    return rows.map((row) => row.id).sort();
  }

  /** EXPLAIN (ANALYZE, BUFFERS) of a statement as the store sent it, rolled back. */
  async function explain(query: { text: string; params: unknown[] }) {
    await admin.query('BEGIN');
    try {
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.params);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await admin.query('ROLLBACK');
    }
  }

  /**
   * The same, as the generic plan a prepared statement falls back to after five calls (the plan
   * cache's choice, shown by planCache): partitions pruned when it starts, not when planned.
   */
  async function explainGeneric(query: { text: string; params: unknown[] }) {
    await admin.query('BEGIN');
    try {
      await admin.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await admin.query(`PREPARE generic_plan AS ${query.text}`);
      // EXECUTE takes no bound parameters: its arguments are literals, typed by the statement.
      const literal = (value: unknown): string =>
        value === null || value === undefined
          ? 'NULL'
          : typeof value === 'number'
            ? String(value)
            : value instanceof Date
              ? admin.escapeLiteral(value.toISOString())
              : Array.isArray(value)
                ? admin.escapeLiteral(`{${value.map(String).join(',')}}`)
                : admin.escapeLiteral(String(value));
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE generic_plan(${query.params.map(literal).join(', ')})`);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } catch (error) {
      return `(no generic plan: ${String(error)})`;
    } finally {
      await admin.query('ROLLBACK');
      await admin.query('DEALLOCATE ALL');
    }
  }

  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const result = await work();
    return [result, (performance.now() - started) * 1000];
  };

  async function measure(size: number, index: number): Promise<Point> {
    const newest = days.at(-1)!;
    const plans: Record<string, string> = {};
    const texts: Partial<Record<StatementKey, string>> = {};
    const samples: Record<StatementKey, number[]> = { claim: [], record: [], takeOverdue: [], pageHook: [], pageAccount: [], pageDay: [], pageDeep: [] };
    // Fresh queued deliveries in the newest day, in a slot of their own at each size.
    const slot = newest + index * 3 * 3_600_000;
    const claimIds = await queue(slot, (reps.claimBatches + WARM) * BATCH, false);
    await queue(slot + 3_600_000, (reps.relayCalls + WARM) * RELAY_BATCH, true);
    await admin.query(`VACUUM ANALYZE deliveries_${dayName(newest)}, events_${dayName(newest)}`);
    const actualRows = fillerRows + measuredRows;
    const ticksBefore = cpuTicks();

    // Claim, then record each batch, as a worker does.
    const batches = Array.from({ length: claimIds.length / BATCH }, (_, i) => claimIds.slice(i * BATCH, (i + 1) * BATCH));
    const outcomes = (batch: string[]) => batch.map((deliveryId) => ({ deliveryId, status: 'delivered' as const, responseStatus: 200, durationMs: 5 }));
    for (const [i, batch] of batches.entries()) {
      const token = randomUUID();
      const [claimed, claimUs] = await timed(() => store.deliveries.claim(batch, token));
      if (claimed.length !== batch.length) throw new Error(`claimed ${claimed.length} of ${batch.length}`);
      if (i === 0) {
        const next = batches[1]!;
        texts.claim = last.text;
        plans.claim = await explain({ text: last.text, params: [next, randomUUID(), ...queuedRange(next)] });
      }
      const [, recordUs] = await timed(() => store.deliveries.record(outcomes(batch), RULE));
      if (i === 1) {
        // The outcome of a batch still claimed: the next one, claimed for it and given back by the rollback.
        const next = batches[2]!;
        const recordQuery = last;
        texts.record = recordQuery.text;
        await admin.query('BEGIN');
        try {
          await admin.query(`UPDATE deliveries SET status = 'sending', attempted_at = clock_timestamp() WHERE id = ANY($1::uuid[])`, [next]);
          const params = [...recordQuery.params];
          params[0] = next;
          const [from, to] = queuedRange(next);
          params[params.length - 2] = from;
          params[params.length - 1] = to;
          const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${recordQuery.text}`, params);
          plans.record = rows.map((row) => row['QUERY PLAN']).join('\n');
        } finally {
          await admin.query('ROLLBACK');
        }
      }
      if (i >= WARM) {
        samples.claim.push(claimUs);
        samples.record.push(recordUs);
      }
    }

    // A statement that fails (past the store's query timeout, say) is reported as such; the others are still measured.
    const failures: Partial<Record<StatementKey, string>> = {};
    const failed = (key: StatementKey, error: unknown) => {
      failures[key] = String(error);
      ctx.progress(`  ${key} FAILED: ${String(error)}`);
    };
    // The relay reads the days since DELIVERY_MAX_WAIT before now (src/workers/outboxRelay.ts); here "now" is in the newest day.
    const queuedSince = newest - SERVICE_DEFAULTS.DELIVERY_MAX_WAIT;
    const relayStarted = performance.now();
    try {
      for (let i = 0; i < reps.relayCalls + WARM; i++) {
        if (samples.takeOverdue.length >= MIN_SAMPLES && performance.now() - relayStarted > BUDGET_MS) break;
        const [taken, us] = await timed(() => store.deliveries.takeOverdue(RELAY_BATCH, 3_600_000, queuedSince));
        if (taken.length !== RELAY_BATCH) throw new Error(`takeOverdue took ${taken.length}, not ${RELAY_BATCH}`);
        if (i === 0) {
          texts.takeOverdue = last.text;
          plans.takeOverdue = await explain(last);
          plans['takeOverdue (generic plan)'] = await explainGeneric(last);
        }
        if (i >= WARM) samples.takeOverdue.push(us);
      }
    } catch (error) {
      failed('takeOverdue', error);
    }

    const middle = days[Math.floor(days.length / 2)]!;
    const pages: [StatementKey, () => ReturnType<Store['deliveries']['page']>][] = [
      ['pageHook', () => store.deliveries.page({ hookId: fillerHook }, { limit: LOG_LIMIT })],
      ['pageAccount', () => store.deliveries.page({ accountId: FILLER }, { limit: LOG_LIMIT })],
      ['pageDay', () => store.deliveries.page({ hookId: fillerHook }, { limit: LOG_LIMIT, since: new Date(middle), until: new Date(middle + DAY) })],
      [
        'pageDeep',
        () => store.deliveries.page({ hookId: fillerHook }, { limit: LOG_LIMIT, after: { queuedAt: positionText(middle + DAY / 2), id: 'ffffffff-ffff-7fff-bfff-ffffffffffff' } }),
      ],
    ];
    // In turns, so that other work on the machine meanwhile weighs on each kind of page alike.
    const pagesStarted = performance.now();
    for (let i = 0; i < reps.pages + WARM; i++) {
      if (i >= WARM + MIN_SAMPLES && performance.now() - pagesStarted > BUDGET_MS) break;
      for (const [key, page] of pages) {
        if (failures[key]) continue;
        try {
          const [result, us] = await timed(page);
          if (result.rows.length !== LOG_LIMIT) throw new Error(`${key}: ${result.rows.length} rows, not ${LOG_LIMIT}`);
          if (i === 0) {
            texts[key] = last.text;
            plans[key] = await explain(last);
            plans[`${key} (generic plan)`] = await explainGeneric(last);
          }
          if (i >= WARM) samples[key].push(us);
        } catch (error) {
          failed(key, error);
        }
      }
    }

    const ticksAfter = cpuTicks();
    // Whether the server planned each call afresh (custom plans, pruned at planning) or reused a
    // generic plan (pruned when it starts): the store's statements are named, prepared ones.
    const prepared = await db.query<{ statement: string; generic_plans: number; custom_plans: number }>(
      'SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements',
    );
    const planCache = Object.fromEntries(
      STATEMENTS.map(({ key }) => {
        const found = prepared.rows.find((row) => row.statement === texts[key]);
        return [key, found ? { generic: Number(found.generic_plans), custom: Number(found.custom_plans) } : undefined];
      }),
    );
    const databaseBytes = Number((await admin.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]!.n);
    const machineBusy = (ticksAfter.busy - ticksBefore.busy) / Math.max(1, ticksAfter.total - ticksBefore.total);

    // What the relay leased is sent meanwhile, as far as retention is concerned.
    await admin.query(`UPDATE deliveries SET status = 'delivered' WHERE hook_id = $1 AND status IN ('queued', 'sending')`, [measuredHook]);

    // Retention: the oldest days, each dropped alone, with all their deliveries done and events fanned out.
    const retention: Point['retention'] = [];
    for (let r = 0; r < RETENTION_DAYS; r++) {
      const oldest = days[0]!;
      const rows = Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM deliveries_${dayName(oldest)}`)).rows[0]!.n);
      await admin.query('CHECKPOINT');
      trace = [];
      const [partitions, us] = await timed(() => store.partitions.dropBefore(oldest + DAY));
      const steps = retentionSteps(trace, us / 1000);
      trace = undefined;
      if (partitions.length !== 2) throw new Error(`dropBefore dropped ${partitions.join(', ') || 'nothing'}, not one day`);
      retention.push({ partitions, rows, ms: us / 1000, steps });
      days.shift();
      eventsIn.delete(oldest);
      fillerRows -= rows;
    }
    // As many days ahead again, empty until the next size fills them.
    const ahead = days.at(-1)! + RETENTION_DAYS * DAY;
    await store.partitions.ensure(Math.round((ahead - today) / DAY));
    for (let day = days.at(-1)! + DAY; day <= ahead; day += DAY) days.push(day);

    const statements = Object.fromEntries(Object.entries(samples).map(([key, us]) => [key, stats(us)])) as Record<StatementKey, Stats>;
    const line = STATEMENTS.map(({ key }) => `${key} ${fmt(statements[key].medianUs)} µs`).join(', ');
    ctx.progress(`  ${fmt(actualRows)} rows: ${line} (machine ${fmt(machineBusy * 100)}% busy meanwhile, this figure included)`);
    ctx.progress(`  plans (generic/custom, one connection): ${STATEMENTS.map(({ key }) => `${key} ${planCache[key] ? `${planCache[key].generic}/${planCache[key].custom}` : '?'}`).join(', ')}`);
    for (const r of retention) {
      const parts = Object.entries(r.steps).map(([step, ms]) => `${step} ${fmt(ms, 1)}`).join(', ');
      ctx.progress(`  retention ${r.partitions.join(' + ')} (${fmt(r.rows)} deliveries): ${fmt(r.ms, 1)} ms = ${parts} ms`);
    }
    ctx.progress(`  database size ${fmt(databaseBytes / 2 ** 30, 1)} GiB`);
    return { size, actualRows, statements, failures, retention, plans, planCache, machineBusy, databaseBytes };
  }

  const points: Point[] = [];
  for (const [index, size] of sizes.entries()) {
    await grow(size);
    points.push(await measure(size, index));
  }

  const plansFile = join(RESULTS_DIR, 'partition-growth-plans.txt');
  writeFileSync(
    plansFile,
    points
      .flatMap((point) => Object.entries(point.plans).map(([key, plan]) => `=== ${key} at ${fmt(point.actualRows)} delivery rows\n${plan}\n`))
      .join('\n'),
  );
  return report(points, seeding, plansFile);
}

/** dropBefore's time by step: listing the partitions, the lock, the check that nothing is still needed, the DROP, and the commit (BEGIN, COMMIT). */
function retentionSteps(trace: { text: string; ms: number }[], totalMs: number) {
  const steps: Record<string, number> = { list: 0, set: 0, lock: 0, check: 0, drop: 0 };
  for (const { text, ms } of trace) {
    const step = text.startsWith('LOCK')
      ? 'lock'
      : text.startsWith('DROP')
        ? 'drop'
        : text.includes('EXISTS')
          ? 'check'
          : text.includes('pg_inherits')
            ? 'list'
            : text.startsWith('SET')
              ? 'set'
              : undefined;
    if (step) steps[step]! += ms;
  }
  // BEGIN and COMMIT: the files of the dropped tables are truncated at COMMIT.
  steps.commit = totalMs - Object.values(steps).reduce((sum, ms) => sum + ms, 0);
  return steps;
}

function report(points: Point[], seeding: unknown[], plansFile: string): FigureResult {
  const base = points[0]!;
  const dimension = `delivery rows over ${DAYS} day partitions (PostgreSQL)`;
  const retentionMs = (point: Point) => point.retention.reduce((sum, r) => sum + r.ms, 0) / point.retention.length;
  const rowsPerDay = (point: Point) => Math.round(point.retention.reduce((sum, r) => sum + r.rows, 0) / point.retention.length);
  const rows: Row[] = [];
  for (const point of points.slice(1)) {
    for (const { key, what } of STATEMENTS) {
      const measured = point.statements[key].medianUs;
      const reference = base.statements[key].medianUs;
      rows.push(
        ratioRow({
          figure: '5',
          what: `Partitioned: ${what}, ${fmt(point.actualRows)} delivery rows`,
          measured: point.failures[key] ? `failed: ${point.failures[key]}` : `${fmt(measured)} µs (median of ${point.statements[key].n})`,
          reference: `${fmt(reference)} µs at ${fmt(base.actualRows)} rows`,
          ratio: measured / reference,
          goal: { atMost: 1.3 },
        }),
      );
    }
    rows.push(
      ratioRow({
        figure: '5',
        what: `Partitioned: retention, ms per day dropped, ${fmt(rowsPerDay(point))} deliveries a day`,
        measured: `${fmt(retentionMs(point), 1)} ms/day`,
        reference: `${fmt(retentionMs(base), 1)} ms/day at ${fmt(rowsPerDay(base))} a day`,
        ratio: retentionMs(point) / retentionMs(base),
        goal: { atMost: 1.3 },
      }),
    );
  }
  const growth: GrowthRow[] = [
    ...STATEMENTS.flatMap(({ key, what }) =>
      growthRows(
        dimension,
        what,
        'µs',
        false,
        points.map((point) => ({ size: point.size, actualRows: point.actualRows, value: point.statements[key].medianUs })),
      ),
    ),
    ...growthRows(
      dimension,
      'retention (dropBefore), per day dropped',
      'ms',
      false,
      points.map((point) => ({ size: point.size, actualRows: rowsPerDay(point), value: retentionMs(point) })),
    ),
  ];
  return {
    rows,
    growth,
    data: {
      partitionGrowth: {
        seeding,
        points: points.map(({ plans: _plans, ...point }) => point),
        plansFile,
      },
    },
    notes: [
      `Partitioned growth (figure 5): a database of its own, through the service's store; ${DAYS} future day partitions hold the rows at every size (a day dropped by retention is replaced by a new one ahead). Filler: one account, ${FANOUT} hooks, ${FANOUT} deliveries per event, all delivered and fanned out, seeded with INSERT … SELECT generate_series straight into the day partitions (ids from deliveryIdAt, events' ids too; no per-row FK trigger), then VACUUM ANALYZE and CHECKPOINT. Claim and outcome: batches of ${BATCH} fresh queued deliveries of another account's hook in the newest day; relay scan: takeOverdue(${RELAY_BATCH}) over overdue queued ones there; log pages of one filler hook (${100 / FANOUT}% of the rows) and of the filler account. Medians of single calls from Node (round trip included), after ${WARM} unmeasured calls each. Retention: dropBefore of the oldest day, ${RETENTION_DAYS} days at each size; "rows at measurement" in its growth row is deliveries per day dropped. Plans: ${plansFile}.`,
    ],
  };
}
