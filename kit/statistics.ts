const ascending = (values: readonly number[]) => [...values].sort((a, b) => a - b);

/** Nearest rank in values already sorted ascending. */
const rank = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** The p-th percentile (nearest rank) of `values`, in any order; NaN when there are none. */
export const percentile = (values: readonly number[], p: number): number => rank(ascending(values), p);

export const median = (values: readonly number[]) => percentile(values, 50);

/** Count, p50, p99 and max of `values`, in any order. */
export function summarize(values: readonly number[]) {
  const sorted = ascending(values);
  return { n: sorted.length, p50: rank(sorted, 50), p99: rank(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

/** The most arrivals (ms) within any `windowMs` (sliding): what a receiver's rate limiter sees. */
export function busiestWindow(arrivals: readonly number[], windowMs: number): number {
  const sorted = ascending(arrivals);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
