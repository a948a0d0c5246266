/**
 * Retention's cost on the partitioned tables: the oldest days dropped one by one through the
 * store's dropBefore, each timed whole and step by step.
 */
import type pg from 'pg';
import { DAY, dayName, retireOldestDay, type GrowthDays } from '../support/partitionSeeding.js';
import type { TimedStatement, TracedStore } from './queryPlans.js';
import { timed } from './statementCosts.js';

export interface RetentionRecord {
  /** The partitions dropped: the day's deliveries and events. */
  partitions: string[];
  /** Deliveries in the day dropped. */
  rows: number;
  ms: number;
  /** ms by step, as retentionSteps names them. */
  steps: Record<string, number>;
}

/** Drops the `count` oldest days, each by its own dropBefore; all their deliveries must be done and events fanned out. */
export async function measureRetention(admin: pg.Client, traced: TracedStore, growth: GrowthDays, count: number) {
  const retention: RetentionRecord[] = [];
  for (let r = 0; r < count; r++) {
    const oldest = growth.days[0]!;
    const rows = Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM deliveries_${dayName(oldest)}`)).rows[0]!.n);
    await admin.query('CHECKPOINT');
    const [[partitions, us], statements] = await traced.traced(() => timed(() => traced.store.partitions.dropBefore(oldest + DAY)));
    const steps = retentionSteps(statements, us / 1000);
    if (partitions.length !== 2) throw new Error(`dropBefore dropped ${partitions.join(', ') || 'nothing'}, not one day`);
    retention.push({ partitions, rows, ms: us / 1000, steps });
    retireOldestDay(growth, rows);
  }
  return retention;
}

/** dropBefore's time by step: listing the partitions, the lock, the check that nothing is still needed, the DROP, and the commit (BEGIN, COMMIT). */
function retentionSteps(trace: TimedStatement[], totalMs: number) {
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
