import type { MemoryInput } from './charts/charts.js';
import type { CpuRow } from './support/cpu.js';
import type { MemoryRow } from './support/services.js';

/** One line of the main table: a figure measured beside its reference in the same run. */
export interface Row {
  figure: string;
  what: string;
  measured: string;
  reference: string;
  ratio: string;
  goal: string;
  result: string;
}

/** One point of a growth series: a figure at one store size, against the smallest size's. */
export interface GrowthRow {
  dimension: string;
  size: number;
  actualRows: number;
  figure: string;
  value: number;
  unit: string;
  ratioToSmallest: number;
  costRatio: number;
  flat: string;
  other: number;
}

/** What a figure hands back: its rows, its raw data for latest.json, and notes for the report. */
export interface FigureResult {
  rows: Row[];
  growth?: GrowthRow[];
  data: Record<string, unknown>;
  notes?: string[];
}

/** A whole run, as latest.json holds it. */
export interface BenchResults {
  startedAt: string;
  environment: Record<string, string | number>;
  settings: Record<string, unknown>;
  figures: Record<string, unknown>;
  rows: Row[];
  growth: GrowthRow[];
  memory: MemoryRow[];
  /** RSS over the run of each group of service processes, summed: the page's memory chart. */
  memoryOverRun: MemoryInput['series'];
  cpu: CpuRow[];
  notes: string[];
  totalSeconds: number;
}

export const fmt = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';

/** A goal a ratio is judged by; `undefined` for figures that are only reported. */
export type Goal = { atLeast: number } | { atMost: number } | { between: [number, number] };

const goalText = (goal: Goal) =>
  'atLeast' in goal ? `≥ ${fmt(goal.atLeast, 2)}` : 'atMost' in goal ? `≤ ${fmt(goal.atMost, 2)}` : `${fmt(goal.between[0], 2)}–${fmt(goal.between[1], 2)}`;

/** Whether a value (rounded as shown) meets the goal. */
export function meets(value: number, goal: Goal, digits = 2) {
  const shown = Number(value.toFixed(digits));
  if ('atLeast' in goal) return shown >= goal.atLeast;
  if ('atMost' in goal) return shown <= goal.atMost;
  return shown >= goal.between[0] && shown <= goal.between[1];
}

/**
 * A row whose ratio is `measured ÷ reference`, judged against `goal` as shown with `digits`
 * decimals (a goal may also judge something other than the ratio: pass `judged`).
 */
export function ratioRow(row: {
  figure: string;
  what: string;
  measured: string;
  reference: string;
  ratio: number;
  digits?: number;
  goal?: Goal;
  /** Free text for a goal that is not on the ratio (e.g. "< 50 ms"), with whether it was met (none: only reported). */
  goalText?: { text: string; met?: boolean };
}): Row {
  const digits = row.digits ?? 2;
  const judged = row.goalText ?? (row.goal ? { text: goalText(row.goal), met: meets(row.ratio, row.goal, digits) } : undefined);
  return {
    figure: row.figure,
    what: row.what,
    measured: row.measured,
    reference: row.reference,
    ratio: fmt(row.ratio, digits),
    goal: judged?.text ?? '—',
    result: judged?.met === undefined ? '—' : judged.met ? 'met' : 'MISSED',
  };
}

/**
 * A growth series: each point against the smallest store's. The cost per operation counts as
 * flat within 30% of the smallest's (run-to-run noise here is ~10-20%).
 */
export function growthRows(
  dimension: string,
  figure: string,
  unit: string,
  higherIsBetter: boolean,
  points: { size: number; actualRows: number; value: number; other?: number }[],
): GrowthRow[] {
  const base = points[0]!.value;
  return points.map((point) => {
    const ratio = point.value / base;
    const costRatio = higherIsBetter ? base / point.value : ratio;
    return {
      dimension,
      size: point.size,
      actualRows: point.actualRows,
      figure,
      value: point.value,
      unit,
      ratioToSmallest: ratio,
      costRatio,
      flat: costRatio <= 1.3 ? 'flat' : 'GROWS',
      other: point.other ?? 0,
    };
  });
}
