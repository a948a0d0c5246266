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
/**
 * Days ahead that partitions exist: inserts never need one that is missing, even if no worker
 * runs maintenance and no process starts for a week. No more: every partition, empty or not,
 * adds to the planning of each statement on the table.
 */
export const DAYS_AHEAD = 7;
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
  /**
   * Drops detached day tables. A delivery table's foreign key to hooks goes first, in a moment:
   * dropping a table that has it locks hooks until the commit, and a DROP's commit unlinks files.
   */
  async function dropFiles(names: string[]) {
    if (names.length === 0) return;
    const { rows } = await db.query<{ table: string; key: string }>(
      `SELECT conrelid::regclass::text AS table, conname AS key FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text = ANY($1::text[])`,
      [names],
    );
    for (const row of rows) await db.exec(`ALTER TABLE ${row.table} DROP CONSTRAINT ${row.key}`);
    await db.exec(`DROP TABLE ${names.join(', ')}`);
  }
  /** Day tables by this service's names that are no longer attached. */
  async function detachedLeftovers() {
    const { rows } = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname ~ '^(deliveries|events)_(until_)?[0-9]{8}$'
         AND NOT c.relispartition`,
    );
    return rows.map((row) => row.name);
  }
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
     * that day waits for the engine to finish with them. Returns the partitions dropped.
     *
     * A day is checked and detached under the two parent tables' locks, which every statement
     * takes before any partition: nothing changes in between, no statement deadlocks with it,
     * and the locks are held for a moment whatever the day's size. Its tables are dropped after,
     * holding no lock any statement needs (dropFiles): a DROP's commit unlinks the files, which
     * takes longer the larger they are.
     */
    async dropBefore(cutoff: number): Promise<string[]> {
      const { deliveries, events } = await list();
      const dropped: string[] = [];
      for (const partition of deliveries.filter((p) => p.until <= cutoff)) {
        const sameDay = events.find((p) => p.until === partition.until);
        const detached = await db.transaction(async (tx) => {
          await tx.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
          await tx.exec('LOCK TABLE ONLY deliveries, ONLY events IN ACCESS EXCLUSIVE MODE');
          const { rows } = await tx.query<{ busy: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM ${partition.name} WHERE status = 'queued')
               OR EXISTS (SELECT 1 FROM ${partition.name} WHERE status = 'sending')
               OR EXISTS (SELECT 1 FROM event_outbox WHERE created_at < $1::timestamptz) AS busy`,
            [new Date(partition.until).toISOString()],
          );
          if (rows[0]!.busy) return [];
          await tx.exec(`ALTER TABLE deliveries DETACH PARTITION ${partition.name}`);
          if (sameDay) await tx.exec(`ALTER TABLE events DETACH PARTITION ${sameDay.name}`);
          return sameDay ? [partition.name, sameDay.name] : [partition.name];
        });
        await dropFiles(detached);
        dropped.push(...detached);
      }
      // Days detached by a process that stopped before it could drop them.
      await dropFiles(await detachedLeftovers());
      return dropped;
    },
  };
}
