/**
 * The bench page's four charts, each from an input of its own: throughput and latency beside
 * their references (bars), pacing against the limit and memory over the run (lines).
 */
import { renderBars, type BarGroup } from './bars.js';
import { renderLines } from './lines.js';
import { formatNumber } from './svg.js';

/** Chart 1: the service's throughput beside its reference, measured in the same run. */
export interface ThroughputInput {
  pairs: Array<{ label: string; unit: string; service: number; reference: number; referenceLabel: string }>;
}

/** Percentiles in milliseconds. */
export interface Percentiles {
  p50: number;
  p99: number;
}

/** Chart 2: call-to-POST latency of the service and of its reference at the same offered rates. */
export interface LatencyInput {
  /** What the reference is, e.g. "raw POST round trip". */
  reference: string;
  rates: Array<{ label: string; offeredPerSecond: number; service: Percentiles; reference: Percentiles }>;
}

/** Chart 3: what paced targets received, each against its limit. */
export interface PacingInput {
  /** Which shape ran, e.g. "web + 2 workers on PostgreSQL and Redis". */
  mode: string;
  /** `arrivalsMs`: each receipt, in ms since the target's first. */
  targets: Array<{ limitPerSecond: number; arrivalsMs: number[] }>;
}

/** Chart 4: resident memory of the measured processes over the run. */
export interface MemoryInput {
  series: Array<{ label: string; points: Array<{ atS: number; rssMiB: number }> }>;
  /** The embedded process's peak goal, drawn as a reference line. */
  goalMiB?: number;
}

const ratio = (service: number, reference: number) => formatNumber(service / reference, 2);

export function throughputChart(input: ThroughputInput): string {
  const groups: BarGroup[] = input.pairs.map((pair) => ({
    label: pair.label,
    note: `ratio ${ratio(pair.service, pair.reference)}`,
    bars: [
      { label: 'service', value: pair.service, valueText: formatNumber(pair.service), kind: 'service' },
      { label: pair.referenceLabel, value: pair.reference, valueText: formatNumber(pair.reference), kind: 'reference' },
    ],
  }));
  const desc = input.pairs
    .map(
      (pair) =>
        `${pair.label}: the service ${formatNumber(pair.service)} ${pair.unit}, ${pair.referenceLabel} ${formatNumber(pair.reference)} ${pair.unit} (ratio ${ratio(pair.service, pair.reference)})`,
    )
    .join('; ');
  return renderBars({
    title: 'Throughput beside its references',
    desc: `Bars of operations per second. ${desc}.`,
    yLabel: 'operations per second',
    groups,
    legend: { service: 'the service', reference: 'its reference, same run' },
  });
}

export function latencyChart(input: LatencyInput): string {
  const ms = (value: number) => `${formatNumber(value, 1)} ms`;
  const groups: BarGroup[] = input.rates.map((rate) => ({
    label: `${rate.label}: ${formatNumber(rate.offeredPerSecond)}/s`,
    note: `p50 ratio ${ratio(rate.service.p50, rate.reference.p50)}, p99 ${ratio(rate.service.p99, rate.reference.p99)}`,
    bars: (['p50', 'p99'] as const).flatMap((percentile) => [
      { label: `${percentile}`, value: rate.service[percentile], valueText: ms(rate.service[percentile]), kind: 'service' as const },
      { label: `${percentile}`, value: rate.reference[percentile], valueText: ms(rate.reference[percentile]), kind: 'reference' as const },
    ]),
  }));
  const desc = input.rates
    .map(
      (rate) =>
        `at ${formatNumber(rate.offeredPerSecond)} calls/s offered (${rate.label}), the service p50 ${ms(rate.service.p50)} and p99 ${ms(rate.service.p99)}; ${input.reference} p50 ${ms(rate.reference.p50)} and p99 ${ms(rate.reference.p99)}`,
    )
    .join('; ');
  return renderBars({
    title: 'Call-to-POST latency percentiles',
    desc: `Bars of milliseconds: ${desc}.`,
    yLabel: 'milliseconds',
    groups,
    legend: { service: 'the service, call to POST received', reference: input.reference },
  });
}

/** At each arrival, the arrivals in the second up to it (the window a receiver's own limiter counts). */
export function slidingSecond(arrivalsMs: number[]): Array<[seconds: number, arrivals: number]> {
  const sorted = [...arrivalsMs].sort((a, b) => a - b);
  let start = 0;
  return sorted.map((at, end) => {
    while (at - sorted[start]! >= 1000) start++;
    return [at / 1000, end - start + 1];
  });
}

export function pacingChart(input: PacingInput): string {
  const panels = input.targets.map((target) => {
    const points = slidingSecond(target.arrivalsMs);
    return {
      title: `Target paced at ${formatNumber(target.limitPerSecond)}/s: busiest second ${Math.max(...points.map(([, n]) => n))}`,
      series: [{ label: 'POSTs received in the second before', points }],
      references: [{ y: target.limitPerSecond, label: `limit ${formatNumber(target.limitPerSecond)}/s` }],
    };
  });
  const desc = panels.map((panel) => panel.title).join('; ');
  return renderLines({
    title: `Pacing: arrivals per sliding second, ${input.mode}`,
    desc: `One panel per target, POSTs received in the preceding second at each receipt against its limit. ${desc}.`,
    xLabel: "seconds since the target's first receipt",
    yLabel: 'POSTs in the preceding second',
    panels,
    referenceLegend: "the target's limit",
    counts: true,
  });
}

/** The points in minutes, with a break wherever samples are missing for longer than a few of their steps (no process of the group ran). */
function withBreaks(points: MemoryInput['series'][number]['points']): Array<[number, number] | null> {
  const gaps = points
    .slice(1)
    .map((point, i) => point.atS - points[i]!.atS)
    .sort((a, b) => a - b);
  const longest = 3 * (gaps[Math.floor(gaps.length / 2)] ?? Infinity);
  return points.flatMap((point, i): Array<[number, number] | null> => {
    const drawn: [number, number] = [point.atS / 60, point.rssMiB];
    return i > 0 && point.atS - points[i - 1]!.atS > longest ? [null, drawn] : [drawn];
  });
}

export function memoryChart(input: MemoryInput): string {
  const series = input.series.map((one) => ({ label: one.label, points: withBreaks(one.points) }));
  const peak = (one: MemoryInput['series'][number]) => Math.max(...one.points.map((point) => point.rssMiB));
  return renderLines({
    title: 'Memory over the run',
    desc: `Resident memory (RSS) of each group of service processes, summed, sampled over the run. Peaks: ${input.series.map((one) => `${one.label} ${formatNumber(peak(one))} MiB`).join('; ')}.`,
    xLabel: 'minutes since the run started',
    yLabel: 'RSS (MiB)',
    panels: [{ series, references: input.goalMiB === undefined ? [] : [{ y: input.goalMiB, label: `${formatNumber(input.goalMiB)} MiB` }] }],
    ...(input.goalMiB === undefined ? {} : { referenceLegend: "the embedded process's peak goal" }),
  });
}
