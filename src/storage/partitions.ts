import type { Database, Sql } from './database.js';

/**
 * Deliveries and events are partitioned by UTC day (migration 7): deliveries by `queued_at`,
 * events by `created_at`, which for a delivery is its event's creation time, so a day's
 * deliveries and their events sit in the partitions of the same day. Names carry the ranges:
 * `deliveries_20261125` holds that day, `deliveries_until_20261125` everything before it (the
 * table as it was before partitioning). A day's two partitions are created together and dropped
 * together, so old rows go at the cost of a DROP, however many there were: no row-by-row
 * DELETE, no bloat and no vacuum behind it.
 */
const TABLES = ['deliveries', 'events'] as const;
type Table = (typeof TABLES)[number];

const DAY_MS = 86_400_000;
/** Days ahead that partitions exist: inserts never need one that is missing, even if maintenance stops for two weeks. */
export const DAYS_AHEAD = 14;
/**
 * Creating or dropping a partition locks its table for a moment; past this wait the work is left
 * to the next maintenance pass rather than queueing every statement behind it for long.
 */
const LOCK_TIMEOUT_MS = 1_000;
// Any constant, the same in every process: two processes never create the same day at once.
const PARTITION_LOCK = 7_340_113;

interface Partition {
  name: string;
  /** Its exclusive upper bound, epoch ms (a UTC midnight). */
  until: number;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayName = (ms: number) => day(ms).replaceAll('-', '');
const bound = (ms: number) => `'${day(ms)} 00:00:00+00'`;

function parsePartition(table: Table, name: string): Partition {
  const match = new RegExp(`^${table}_(until_)?(\\d{4})(\\d{2})(\\d{2})$`).exec(name);
  if (!match) throw new Error(`${name} is not a partition of ${table} this service made`);
  const start = Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4]));
  return { name, until: match[1] ? start : start + DAY_MS };
}

/** The partitions of `table`, oldest first. */
async function partitionsOf(sql: Sql, table: Table) {
  const { rows } = await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [table],
  );
  return rows.map((row) => parsePartition(table, row.name)).sort((a, b) => a.until - b.until);
}

/** Today's UTC midnight and the time now, epoch ms, on the database's clock (the one rows are stamped with). */
async function databaseClock(sql: Sql) {
  const { rows } = await sql.query<{ now: number; today: number }>(
    `SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS now,
       extract(epoch FROM date_trunc('day', clock_timestamp(), 'UTC'))::float8 * 1000 AS today`,
  );
  return rows[0]!;
}

export function partitionQueries(db: Database) {
  const list = async () => ({ deliveries: await partitionsOf(db, 'deliveries'), events: await partitionsOf(db, 'events') });
  return {
    /** Every partition of both tables, oldest first. */
    list,

    /** The database's clock, epoch ms: retention's cutoff is taken on it. */
    now: async () => (await databaseClock(db)).now,

    /**
     * Creates the day partitions missing between the last one and `daysAhead` days after today.
     * Returns their names. At start and at every maintenance pass; one process at a time.
     */
    async ensure(daysAhead = DAYS_AHEAD): Promise<string[]> {
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
        await tx.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
        const { today } = await databaseClock(tx);
        const created: string[] = [];
        for (const table of TABLES) {
          const existing = await partitionsOf(tx, table);
          for (let from = Math.max(...existing.map((p) => p.until)); from <= today + daysAhead * DAY_MS; from += DAY_MS) {
            const name = `${table}_${dayName(from)}`;
            await tx.exec(`CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES FROM (${bound(from)}) TO (${bound(from + DAY_MS)})`);
            created.push(name);
          }
        }
        return created;
      });
    },

    /**
     * Drops, oldest first, each day whose rows are all older than `cutoff` (epoch ms), with its
     * events, unless it still holds a delivery queued or sending, or an event not yet fanned out:
     * that day waits for the engine to finish with them. Checked and dropped under the two
     * parent tables' locks (a DROP takes them anyway), which every statement takes before any
     * partition: nothing changes in between, and no statement deadlocks with it. Returns the
     * partitions dropped.
     */
    async dropBefore(cutoff: number): Promise<string[]> {
      const { deliveries, events } = await list();
      const dropped: string[] = [];
      for (const partition of deliveries.filter((p) => p.until <= cutoff)) {
        const sameDay = events.find((p) => p.until === partition.until);
        const gone = await db.transaction(async (tx) => {
          await tx.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
          await tx.exec('LOCK TABLE ONLY deliveries, ONLY events IN ACCESS EXCLUSIVE MODE');
          const { rows } = await tx.query<{ busy: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM ${partition.name} WHERE status = 'queued')
               OR EXISTS (SELECT 1 FROM ${partition.name} WHERE status = 'sending')
               ${sameDay ? `OR EXISTS (SELECT 1 FROM ${sameDay.name} WHERE dispatched_at IS NULL)` : ''} AS busy`,
          );
          if (rows[0]!.busy) return [];
          const names = sameDay ? [partition.name, sameDay.name] : [partition.name];
          await tx.exec(`DROP TABLE ${names.join(', ')}`);
          return names;
        });
        dropped.push(...gone);
      }
      return dropped;
    },
  };
}
