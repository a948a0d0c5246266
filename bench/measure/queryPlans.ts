/**
 * What the store's statements cost the server, beside their time: the statements as the store
 * sent them, their plans (EXPLAIN ANALYZE, custom and generic), and which plans the server used.
 */
import type pg from 'pg';
import type { Database, Sql } from '../../src/storage/database.js';
import { createStore } from '../../src/storage/store.js';

/** A statement as the store sent it. */
export interface SentQuery {
  text: string;
  params: unknown[];
}

/** A statement run and its time. */
export interface TimedStatement {
  text: string;
  ms: number;
}

/**
 * The service's store over a database that remembers the last statement it ran, to EXPLAIN it as
 * sent, and times every statement run within `traced` (retention's, step by step).
 */
export function createTracedStore(db: Database) {
  let last: SentQuery = { text: '', params: [] };
  let trace: TimedStatement[] | undefined;
  const tap = (sql: Sql): Sql => ({
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
  // The same database in each of its lines and plan modes: the store runs the engine's writes on
  // `ahead()` and `genericPlans()`, and those must be remembered and timed too.
  const tapDatabase = (database: Database): Database => ({
    ...database,
    ...tap(database),
    transaction: (work) => database.transaction((tx) => work(tap(tx))),
    ahead: () => tapDatabase(database.ahead()),
    genericPlans: () => tapDatabase(database.genericPlans()),
  });
  return {
    store: createStore(tapDatabase(db)),
    /** The statement the store sent last. */
    lastQuery: () => last,
    /** `work`'s result, and each statement the store ran meanwhile with its time. */
    async traced<T>(work: () => Promise<T>): Promise<[T, TimedStatement[]]> {
      const statements: TimedStatement[] = [];
      trace = statements;
      try {
        return [await work(), statements];
      } finally {
        trace = undefined;
      }
    },
  };
}
export type TracedStore = ReturnType<typeof createTracedStore>;

const planText = (rows: { 'QUERY PLAN': string }[]) => rows.map((row) => row['QUERY PLAN']).join('\n');

/**
 * EXPLAIN (ANALYZE, BUFFERS) of a statement as the store sent it (a custom plan: parameters
 * bound), rolled back, after `setup` in the same transaction (the rows it needs, say).
 */
export async function explain(admin: pg.Client, query: SentQuery, setup?: SentQuery) {
  await admin.query('BEGIN');
  try {
    if (setup) await admin.query(setup.text, setup.params);
    const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.params);
    return planText(rows);
  } finally {
    await admin.query('ROLLBACK');
  }
}

/**
 * The same, as the generic plan a prepared statement falls back to after five calls (the plan
 * cache's choice, shown by plansUsed), and the plan the engine's writes always run
 * (Database.genericPlans): partitions pruned when it starts, not when planned.
 */
export async function explainGeneric(admin: pg.Client, query: SentQuery, setup?: SentQuery) {
  await admin.query('BEGIN');
  try {
    if (setup) await admin.query(setup.text, setup.params);
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
              : admin.escapeLiteral(String(value)); // eslint-disable-line @typescript-eslint/no-base-to-string -- the service's other parameters are strings and booleans
    const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE generic_plan(${query.params.map(literal).join(', ')})`);
    return planText(rows);
  } catch (error) {
    return `(no generic plan: ${String(error)})`;
  } finally {
    await admin.query('ROLLBACK');
    await admin.query('DEALLOCATE ALL');
  }
}

/**
 * Whether the server planned each call afresh (custom plans, pruned at planning) or reused a
 * generic plan (pruned when it starts), by statement key: the store's statements are named,
 * prepared ones, so `db`'s connection shows their counts. `texts` are the statements as sent.
 * The engine's writes (claim, record) always run generic plans, on connections of their own
 * (Database.genericPlans) that the pool closes once idle: they show no counts here.
 */
export async function plansUsed<Key extends string>(db: Database, keys: readonly Key[], texts: Partial<Record<Key, string>>) {
  const prepared = await db.query<{ statement: string; generic_plans: number; custom_plans: number }>(
    'SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements',
  );
  return Object.fromEntries(
    keys.map((key) => {
      const found = prepared.rows.find((row) => row.statement === texts[key]);
      return [key, found ? { generic: Number(found.generic_plans), custom: Number(found.custom_plans) } : undefined];
    }),
  ) as Record<Key, { generic: number; custom: number } | undefined>;
}
