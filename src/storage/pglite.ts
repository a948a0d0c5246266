import { PGlite } from '@electric-sql/pglite';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import { copyBlankCluster } from './blankCluster.js';
import type { Database, Sql } from './database.js';
import { preparedQueries } from './pglitePrepared.js';

/**
 * PGlite's own settings, for a process that must fit a small box. PostgreSQL's default 128 MB of
 * shared buffers would all be resident in the WebAssembly heap; 8 MB hold the hot pages of this
 * schema (one process, one connection: the outbox's and the engine's indexes), and the operating
 * system's page cache holds the rest: twice as many made upserts no faster.
 */
const PGLITE_SETTINGS = ['shared_buffers=8MB'];

/** Which line a statement waits in: `first` for work due at a moment (a claim before its departure). */
type Line = 'first' | 'rest';

/**
 * PGlite runs every statement on this thread, synchronously, one at a time. Left to itself it
 * would take them in arrival order, and run one after another within a single turn of the event
 * loop: under a burst of API requests, fifty upserts would run back to back while the engine's
 * timers (a departure granted at the gate) and its claim waited behind them all, and paced POSTs
 * would leave late and be given back. So statements take turns here: one per turn of the event
 * loop (timers and sockets are served between two), and the urgent line goes first. Only claims
 * are urgent: they are group commits, one at a time, so they cannot crowd the rest out. Fan-out
 * and outcomes wait their turn like the API's statements: putting them first too made their
 * batches smaller and the embedded mode slower.
 */
function createTurns() {
  const waiting: Record<Line, (() => void)[]> = { first: [], rest: [] };
  let running = false;
  const next = () => {
    const run = waiting.first.shift() ?? waiting.rest.shift();
    running = run !== undefined;
    run?.();
  };
  return <T>(line: Line, work: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      waiting[line].push(
        () =>
          void work()
            .then(resolve, reject)
            .finally(() => setImmediate(next)),
      );
      if (!running) next();
    });
}

/**
 * PGlite is one connection in this process (see createTurns). A new `dataDir` starts as a copy
 * of the blank cluster (blankCluster.ts); with `dataDir` absent it lives in memory (tests). V8
 * compiles PGlite's WebAssembly once, with its baseline compiler only: the optimised second
 * compilation would keep tens of MiB more code resident, for queries whose time goes to
 * PostgreSQL's own work either way.
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  v8.setFlagsFromString('--liftoff-only');
  if (dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION'))) copyBlankCluster(dataDir);
  const db = await PGlite.create(dataDir, { postgresqlconf: PGLITE_SETTINGS });
  const takeTurn = createTurns();
  // Named prepared statements over PGlite's one connection, inside a transaction as outside it.
  const query = preparedQueries(db);
  const adapt = (sql: Pick<PGlite, 'exec'>): Sql => ({
    query,
    exec: async (text) => {
      await sql.exec(text);
    },
  });
  const direct = adapt(db);
  // One connection, so a generic plan is asked for around the work that wants it, and the
  // setting put back before the next turn: outside a transaction, so a failure cannot keep it.
  const withGenericPlans =
    <T>(work: () => Promise<T>) =>
    async () => {
      await db.exec('SET plan_cache_mode = force_generic_plan');
      try {
        return await work();
      } finally {
        await db.exec('RESET plan_cache_mode');
      }
    };
  const inLine = (line: Line, plans: 'custom' | 'generic'): Database => {
    const turn = <T>(work: () => Promise<T>) => takeTurn(line, plans === 'generic' ? withGenericPlans(work) : work);
    return {
      engine: 'pglite',
      query: (text, params) => turn(() => direct.query(text, params)),
      exec: (text, options) => turn(() => direct.exec(text, options)),
      // A transaction is one turn: nothing else runs between its statements.
      transaction: (work) => turn(() => db.transaction((tx) => work(adapt(tx)))),
      ahead: () => inLine('first', plans),
      genericPlans: () => inLine(line, 'generic'),
      close: () => db.close(),
    };
  };
  return inLine('rest', 'custom');
}
