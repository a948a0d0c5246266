/**
 * What figure 5's partition series (bench/figures/partitionGrowth.ts) reports of its points:
 * each grown size against the smallest, as ratio rows for the 1.3× goal, growth rows, its data
 * and its note.
 */
import type { Beside } from '../measure/claimsBeside.js';
import type { RetentionRecord } from '../measure/retentionCost.js';
import { BATCH, RELAY_BATCH, STATEMENTS, WARM, type StatementKey, type Stats } from '../measure/statementCosts.js';
import { fmt, growthRows, ratioRow, type FigureResult, type GrowthRow, type Row } from '../results.js';
import { DAYS, FANOUT } from '../support/partitionSeeding.js';

export interface Point {
  size: number;
  /** Delivery rows in the table while the statements were measured. */
  actualRows: number;
  statements: Record<StatementKey, Stats>;
  failures: Partial<Record<StatementKey, string>>;
  retention: RetentionRecord[];
  /** At the smallest size: days as big as the largest size's, dropped from this small table (retention's reference). */
  bigDayRetention?: { records: RetentionRecord[]; tableRows: number };
  /** Share of the machine's CPU busy while the statements were measured (ours included: Node and one backend, about one core). */
  machineBusy: number;
  databaseBytes: number;
  /** Generic and custom plans the server used for each statement on one of the store's connections. */
  planCache: Record<string, { generic: number; custom: number } | undefined>;
  /** EXPLAIN (ANALYZE, BUFFERS) of each statement at this size (custom plans: parameters bound). */
  plans: Record<string, string>;
  /** At a grown size: its claim and outcome against a database kept at the smallest size, in alternating rounds. */
  beside?: Beside;
}

/**
 * A grown size's statement against its reference: the claim and the outcome against the database
 * kept at the smallest size, from the same alternating rounds (claimsBeside.ts); the others
 * against the smallest size measured minutes before.
 */
function againstReference(point: Point, base: Point, key: StatementKey) {
  const beside = key === 'claim' || key === 'record' ? point.beside?.[key] : undefined;
  if (beside) {
    return {
      measured: `${fmt(beside.grown.medianUs)} µs (median of ${beside.grown.n}, alternating rounds)`,
      reference: `${fmt(beside.reference.medianUs)} µs on a second database of ${fmt(point.beside!.referenceRows)} rows, in the same rounds`,
      ratio: beside.grown.medianUs / beside.reference.medianUs,
    };
  }
  const measured = point.statements[key];
  return {
    measured: `${fmt(measured.medianUs)} µs (median of ${measured.n})`,
    reference: `${fmt(base.statements[key].medianUs)} µs at ${fmt(base.actualRows)} rows`,
    ratio: measured.medianUs / base.statements[key].medianUs,
  };
}

/** Each grown size against the smallest: ratio rows for the 1.3× goal, growth rows, the data and the note. */
export function report(points: Point[], seeding: unknown[], plansFile: string, sizes: { baseRows: number; retentionDays: number }): FigureResult {
  const base = points[0]!;
  const dimension = `delivery rows over ${DAYS} day partitions (PostgreSQL)`;
  const retentionMs = (point: Point) => point.retention.reduce((sum, r) => sum + r.ms, 0) / point.retention.length;
  const rowsPerDay = (point: Point) => Math.round(point.retention.reduce((sum, r) => sum + r.rows, 0) / point.retention.length);
  const rows: Row[] = [];
  for (const point of points.slice(1)) {
    for (const { key, what } of STATEMENTS) {
      rows.push(
        ratioRow({
          figure: '5',
          what: `Partitioned: ${what}, ${fmt(point.actualRows)} delivery rows`,
          ...againstReference(point, base, key),
          ...(point.failures[key] ? { measured: `failed: ${point.failures[key]}` } : {}),
          goal: { atMost: 1.3 },
        }),
      );
    }
    // Reported: a bigger day has bigger files to free.
    rows.push(
      ratioRow({
        figure: '5',
        what: `Partitioned: retention, ms per day dropped, ${fmt(rowsPerDay(point))} deliveries a day`,
        measured: `${fmt(retentionMs(point), 1)} ms/day`,
        reference: `${fmt(retentionMs(base), 1)} ms/day at ${fmt(rowsPerDay(base))} a day`,
        ratio: retentionMs(point) / retentionMs(base),
      }),
    );
  }
  const largest = points.at(-1)!;
  if (base.bigDayRetention && largest !== base) {
    const { records, tableRows } = base.bigDayRetention;
    const referenceMs = records.reduce((sum, r) => sum + r.ms, 0) / records.length;
    rows.push(
      ratioRow({
        figure: '5',
        what: `Partitioned: retention, ms per day of ${fmt(rowsPerDay(largest))} deliveries dropped, ${fmt(largest.actualRows)} delivery rows`,
        measured: `${fmt(retentionMs(largest), 1)} ms/day`,
        reference: `${fmt(referenceMs, 1)} ms/day for days as big dropped from about ${fmt(tableRows)} rows`,
        ratio: retentionMs(largest) / referenceMs,
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
      `Partitioned growth (figure 5): a database of its own, through the service's store; ${DAYS} future day partitions hold the rows at every size (a day dropped by retention is replaced by a new one ahead). Filler: one account, ${FANOUT} hooks, ${FANOUT} deliveries per event, all delivered and fanned out, seeded with INSERT … SELECT generate_series straight into the day partitions (ids from deliveryIdAt, events' ids too; no per-row FK trigger), then VACUUM ANALYZE and CHECKPOINT. Claim and outcome: batches of ${BATCH} fresh queued deliveries of another account's hook in the newest day; relay scan: takeOverdue(${RELAY_BATCH}) over overdue queued ones there; log pages of one filler hook (${100 / FANOUT}% of the rows) and of the filler account. Medians of single calls from Node (round trip included), after ${WARM} unmeasured calls each. At each grown size the claim and the outcome are also measured beside a second database kept at ${fmt(sizes.baseRows)} filler rows, in alternating rounds (bench/measure/claimsBeside.ts), and their ratio rows are to that: the series' smallest size is measured minutes before, and the host drifts. Retention: dropBefore of the oldest day, ${sizes.retentionDays} days at each size; "rows at measurement" in its growth row is deliveries per day dropped; its reference for the largest size is ${sizes.retentionDays} days filled as that size's are, dropped from the smallest table the same way. Plans: ${plansFile}.`,
    ],
  };
}
