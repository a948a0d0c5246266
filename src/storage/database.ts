import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { DatabaseUnavailableError } from '../domain/errors.js';

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** What queries need: a connection, or a transaction on one. */
export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<Row>>;
  /**
   * Runs a script of several statements, without parameters (migrations, DDL). `timeoutMs`
   * replaces the query timeout (PostgreSQL only): a migration may rebuild a large table's indexes.
   */
  exec(text: string, options?: { timeoutMs?: number }): Promise<void>;
}

/** The same SQL runs on both engines; only how a connection is had differs. */
export interface Database extends Sql {
  readonly engine: 'postgres' | 'pglite';
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * The same database, for work due at a moment (the delivery engine's): on PGlite, one
   * connection, its statements run before others waiting; on PostgreSQL, where each statement
   * has a connection of its own, it is this one.
   */
  ahead(): Database;
  /**
   * The same database, with each statement planned once for every value of its parameters
   * (PostgreSQL's generic plan) rather than anew on each call. For the delivery engine's batched
   * writes: PostgreSQL re-plans them on every call, since over day partitions a plan made for the
   * values looks cheaper, and making it takes longer than running it. Never for a
   * statement with `LIMIT $n`: a generic plan does not know n, and plans for a tenth of the table.
   */
  genericPlans(): Database;
  close(): Promise<void>;
}

/**
 * Errors that mean the server could not be reached or dropped us: the request gets a clean 503
 * and may be retried; nothing it asked for was committed.
 */
// 53300: the server has no connection slot left (too_many_connections); like a refusal, it passes.
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '53300', '57P01', '57P02', '57P03']);

function isConnectionError(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (code && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i.test(message ?? '');
}

const asUnavailable = (error: unknown): never => {
  throw isConnectionError(error) ? new DatabaseUnavailableError(error) : error;
};

// Postgres returns bigint counts and timestamps as strings/dates; keep timestamps as Date on both engines.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * Every query is a named prepared statement, so the server parses and plans each SQL text once
 * per connection instead of on every call. The name is derived from the text, so it is stable.
 */
const statementNames = new Map<string, string>();
function statementName(text: string) {
  let name = statementNames.get(text);
  if (!name) {
    name = `q${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** How long a query may wait for its answer, unless a script says otherwise. */
const QUERY_TIMEOUT_MS = 10_000;

/** Connections of the pool whose statements keep generic plans: the engine's group commits, one statement each at a time. */
const GENERIC_PLAN_POOL_SIZE = 4;

export function openPostgres(url: string, options: { max?: number; log: Pick<Logger, 'warn'> }): Database {
  // Bounded waits: a server that stops answering turns into 503s within seconds, never a hang.
  // Connections idle for 10 s close, down to `min`: those stay through a quiet spell, with the
  // statements they prepared and planned, so the next call pays for neither a new connection
  // (a TLS handshake to a managed server) nor its planning.
  const openPool = (max: number, min: number, settings?: string) => {
    const pool = new pg.Pool({ connectionString: url, max, min, connectionTimeoutMillis: 3_000, query_timeout: QUERY_TIMEOUT_MS, options: settings });
    // An idle client losing its server must not crash the process; the pool drops it, and the
    // next query that needs the server reports the failure to its caller.
    pool.on('error', (error) => options.log.warn({ err: error }, 'an idle PostgreSQL connection failed; the pool dropped it'));
    return pool;
  };
  const pool = openPool(options.max ?? 20, 1);
  // Connections are made when first asked for: a process that never runs such a statement (web)
  // opens none. Those it made stay: each holds the engine's plans.
  const genericPlanPool = openPool(GENERIC_PLAN_POOL_SIZE, GENERIC_PLAN_POOL_SIZE, '-c plan_cache_mode=force_generic_plan');
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= Promise.all([pool.end(), genericPlanPool.end()]).then(() => undefined));
  const generic: Database = overPool(genericPlanPool, () => generic, close);
  return overPool(pool, () => generic, close);
}

function overPool(pool: pg.Pool, genericPlans: () => Database, close: () => Promise<void>): Database {
  const adapt = (client: pg.Pool | pg.PoolClient, onConnectionLost = () => {}): Sql => {
    const failed = (error: unknown): never => {
      if (isConnectionError(error)) onConnectionLost();
      return asUnavailable(error);
    };
    return {
      query: async <Row>(text: string, params?: unknown[]) => {
        const result = await client.query({ name: statementName(text), text, values: params }).catch(failed);
        // pg types rows as any; the caller names the row it selected.
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      },
      exec: async (text, options) => {
        // pg reads query_timeout per query too; its types only know the pool's.
        const script: pg.QueryConfig & { query_timeout: number } = { text, query_timeout: options?.timeoutMs ?? QUERY_TIMEOUT_MS };
        await client.query(script).catch(failed);
      },
    };
  };
  const db: Database = {
    engine: 'postgres',
    ...adapt(pool),
    async transaction(work) {
      const client = await pool.connect().catch(asUnavailable);
      let broken = false;
      // A checked-out client whose connection drops between two queries emits 'error'; unheard,
      // that event would crash the process. The transaction's next query fails and says so.
      const markBroken = () => (broken = true);
      client.on('error', markBroken);
      const tx = adapt(client, () => (broken = true));
      try {
        await tx.query('BEGIN');
        const result = await work(tx);
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        // A lost or silent connection is dropped without a ROLLBACK: the server rolls back a
        // transaction whose connection goes, and a ROLLBACK would only queue behind the query
        // that never answered, for another query_timeout. One that cannot roll back is dropped too.
        if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
        throw error;
      } finally {
        client.off('error', markBroken);
        client.release(broken);
      }
    },
    ahead: () => db,
    genericPlans,
    close,
  };
  return db;
}
