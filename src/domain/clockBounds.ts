/**
 * How far two clocks may drift apart, per ms: 1,000 ppm, two clocks each slewed by NTP at its
 * fastest (500 ppm). A bound learnt from a call is loosened by this much as it ages.
 */
export const CLOCK_DRIFT_PER_MS = 0.001;

/** Where another clock stands against this one: its reading minus ours lies in [low, high] (ms). */
export interface ClockOffset {
  low: number;
  high: number;
}

/**
 * Bounds on another clock (the pacer's, in Redis) against this process's, from the round trips
 * of calls that read it, as NTP bounds a server's: a call sent at `sentAt` and answered at
 * `answeredAt` (this clock) that read `theirs` puts the offset between theirs − answeredAt and
 * theirs − sentAt. Each answer is placed by the tightest bounds of the calls so far, each loosened
 * by the drift since, not by its own round trip alone: an answer that reached a busy process late
 * says as precisely when the pacer's time falls here as the quickest call lately did. A call that
 * contradicts what was learnt (a clock stepped) starts the bounds afresh from itself.
 */
export function createClockBounds() {
  let low = { offset: Number.NEGATIVE_INFINITY, at: 0 };
  let high = { offset: Number.POSITIVE_INFINITY, at: 0 };
  return {
    /** Takes one call's round trip into account; the bounds at its answer. */
    observe(sentAt: number, answeredAt: number, theirs: number): ClockOffset {
      const call = { low: theirs - answeredAt, high: theirs - sentAt };
      const kept = { low: low.offset - CLOCK_DRIFT_PER_MS * (answeredAt - low.at), high: high.offset + CLOCK_DRIFT_PER_MS * (answeredAt - high.at) };
      if (call.high < kept.low || call.low > kept.high) [kept.low, kept.high] = [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
      if (call.low >= kept.low) low = { offset: call.low, at: answeredAt };
      if (call.high <= kept.high) high = { offset: call.high, at: answeredAt };
      return { low: Math.max(call.low, kept.low), high: Math.min(call.high, kept.high) };
    },
  };
}
