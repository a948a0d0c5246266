import type { Sql } from './database.js';

/**
 * When a table needs a VACUUM: PostgreSQL's autovacuum defaults (autovacuum_vacuum_threshold,
 * autovacuum_vacuum_scale_factor, autovacuum_freeze_max_age).
 */
export interface VacuumThresholds {
  /** Dead rows past this many plus `deadFraction` of the live ones. */
  deadRows: number;
  deadFraction: number;
  /** Transactions since the table's oldest unfrozen row. */
  freezeAge: number;
}

export const AUTOVACUUM_THRESHOLDS: VacuumThresholds = { deadRows: 50, deadFraction: 0.2, freezeAge: 200_000_000 };

/**
 * What PostgreSQL's autovacuum does on a server, for PGlite, which runs none. Without it, every
 * claim and outcome leaves a dead row behind for good (a status change is never a HOT update:
 * partial indexes name the status), and no table's rows are ever frozen, so a long-running
 * install would reach transaction-id wraparound, where old rows become invisible.
 */
export function vacuumQueries(db: Sql) {
  return {
    /**
     * The tables past a threshold, the oldest first: the schema's day partitions and tables, and
     * the catalog's (each day's partitions add rows to it). Named for VACUUM, quoted.
     */
    async due(thresholds: VacuumThresholds) {
      const { rows } = await db.query<{ name: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
         WHERE c.relkind = 'r' AND n.nspname IN ('public', 'pg_catalog')
           AND (coalesce(s.n_dead_tup, 0) > $1::float8 + $2::float8 * coalesce(s.n_live_tup, 0) OR age(c.relfrozenxid) > $3::int)
         ORDER BY age(c.relfrozenxid) DESC`,
        [thresholds.deadRows, thresholds.deadFraction, thresholds.freezeAge],
      );
      return rows.map((row) => row.name);
    },

    /** One table, as `due` named it. A statement of its own: VACUUM runs in no transaction. */
    async vacuum(table: string) {
      await db.exec(`VACUUM ${table}`);
    },
  };
}
