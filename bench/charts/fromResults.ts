/**
 * Each chart's input, read from a run's results (latest.json's shape): undefined for a chart
 * whose figures did not run (BENCH_ONLY), so the page leaves it out.
 */
import { PEAK_GOAL_MIB } from '../figures/embedded.js';
import type { BenchResults } from '../results.js';
import type { LatencyInput, MemoryInput, PacingInput, ThroughputInput } from './charts.js';

/** The value at `path` in a figure's data, which the figures type for themselves. */
const at = (value: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((inner, key) => (typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)[key] : undefined), value);
const numberAt = (value: unknown, ...path: Array<string | number>) => {
  const found = at(value, ...path);
  return typeof found === 'number' && Number.isFinite(found) ? found : undefined;
};

/** Figure 1's upserts beside the raw driver, and figure 2's deliveries beside the durable minimum. */
export function throughputInput(results: BenchResults): ThroughputInput | undefined {
  const { figures } = results;
  const pairs: ThroughputInput['pairs'] = [];
  const api = numberAt(figures, 'contactGrowthPostgres', 0, 'api', 'perSecond');
  const direct = numberAt(figures, 'contactGrowthPostgres', 0, 'direct', 'perSecond');
  if (api !== undefined && direct !== undefined) {
    pairs.push({ label: 'Upserts, PostgreSQL', unit: 'upserts/s', service: api, reference: direct, referenceLabel: 'raw driver' });
  }
  for (const [key, workers] of [
    ['one', 'web + 1 worker'],
    ['two', 'web + 2 workers'],
  ] as const) {
    const service = numberAt(figures, 'deliveryThroughput', key, 'median', 'engine', 'perSecond');
    const minimum = numberAt(figures, 'deliveryThroughput', key, 'median', 'minimum');
    if (service !== undefined && minimum !== undefined) {
      pairs.push({ label: `Delivery, ${workers}`, unit: 'deliveries/s', service, reference: minimum, referenceLabel: 'durable min.' });
    }
  }
  return pairs.length > 0 ? { pairs } : undefined;
}

/** Figure 3's percentiles at each offered rate, as it hands them over (`latencyRates`). */
export function latencyInput(results: BenchResults): LatencyInput | undefined {
  return results.figures.latencyRates as LatencyInput | undefined;
}

/** Figure 7's receipts, for each shape that ran it. */
export function pacingInputs(results: BenchResults): Array<{ name: string; input: PacingInput }> {
  const workers = numberAt(results.settings, 'pacedFigures', 'workers');
  const modes = [
    { name: 'pacing-workers', key: 'pacedRateWorkers', mode: `web + ${workers ?? 'n'} workers on PostgreSQL and Redis` },
    { name: 'pacing-embedded', key: 'pacedRateEmbedded', mode: 'embedded, one process on PGlite' },
  ];
  return modes.flatMap(({ name, key, mode }) => {
    const targets = results.figures[key];
    if (!Array.isArray(targets)) return [];
    const input: PacingInput = {
      mode,
      targets: targets.map((target: unknown) => ({
        limitPerSecond: numberAt(target, 'limit') ?? NaN,
        arrivalsMs: (at(target, 'arrivalsMs') as number[] | undefined) ?? [],
      })),
    };
    return input.targets.every((target) => target.arrivalsMs.length > 0) ? [{ name, input }] : [];
  });
}

export function memoryInput(results: BenchResults): MemoryInput | undefined {
  const series = results.memoryOverRun.filter((one) => one.points.length > 0);
  return series.length > 0 ? { series, goalMiB: PEAK_GOAL_MIB } : undefined;
}
