import { OUTCOME_STATUSES, type OutcomeStatus } from './hookHealth.js';

const HOUR_MS = 3_600_000;

/** One bar of a chart: the outcomes counted from `start` for its span, by status (0 when none). */
export interface OutcomeBucket {
  start: string;
  counts: Record<OutcomeStatus, number>;
}

const empty = () => Object.fromEntries(OUTCOME_STATUSES.map((status) => [status, 0])) as Record<OutcomeStatus, number>;

/**
 * A hook's hourly outcome counts as two series ending with the current hour: the 24 hours (as
 * last_24h counts them), and 7 days of 24 hours each. Days end at the current hour rather than at
 * midnight, whose time zone would be the server's, not the reader's.
 */
export function outcomeSeries(rows: ReadonlyArray<{ hour: string; status: OutcomeStatus; count: number }>, now: number) {
  const currentHour = Math.floor(now / HOUR_MS) * HOUR_MS;
  const series = (buckets: number, hoursEach: number) => {
    const first = currentHour - (buckets * hoursEach - 1) * HOUR_MS;
    const bars: OutcomeBucket[] = Array.from({ length: buckets }, (_, i) => ({
      start: new Date(first + i * hoursEach * HOUR_MS).toISOString(),
      counts: empty(),
    }));
    for (const row of rows) {
      const index = Math.floor((Date.parse(row.hour) - first) / (hoursEach * HOUR_MS));
      if (index >= 0 && index < buckets) bars[index]!.counts[row.status] += row.count;
    }
    return bars;
  };
  return { hours: series(24, 1), days: series(7, 24) };
}
