import { describe, expect, it } from 'vitest';
import { CLOCK_DRIFT_PER_MS, createClockBounds } from '../../src/domain/clockBounds.js';

// Their clock reads ours + 5,000 ms throughout, unless a test steps it.
const OFFSET = 5_000;

describe('clock bounds: where the pacer\'s clock stands against this process\'s', () => {
  it('places a slow answer as precisely as the quickest call before it, loosened by the drift since', () => {
    const clock = createClockBounds();
    // A quick call: read 1 ms after it was sent, answered 1 ms later.
    expect(clock.observe(1_000, 1_002, 1_001 + OFFSET)).toStrictEqual({ low: OFFSET - 1, high: OFFSET + 1 });
    // Sent at 2,000, read at once, answered 300 ms later (a busy event loop): its own bounds are 300 ms apart.
    const slow = clock.observe(2_000, 2_300, 2_000 + OFFSET);
    expect(slow.low).toBeCloseTo(OFFSET - 1 - CLOCK_DRIFT_PER_MS * (2_300 - 1_002), 9);
    expect(slow.high).toBe(OFFSET);
    expect(slow.high - slow.low).toBeLessThan(3);
  });

  it('keeps the offset within its bounds while the clocks drift apart at the drift allowed', () => {
    const clock = createClockBounds();
    let ours = 0;
    for (let call = 0; call < 200; call++) {
      const roundTrip = call % 10 === 0 ? 1 : 40 + (call % 7) * 30;
      const theirsAt = (t: number) => t + OFFSET + CLOCK_DRIFT_PER_MS * t;
      const sentAt = ours;
      const readAt = sentAt + roundTrip / 4;
      const bounds = clock.observe(sentAt, sentAt + roundTrip, theirsAt(readAt));
      const offsetAtAnswer = theirsAt(sentAt + roundTrip) - (sentAt + roundTrip);
      expect(bounds.low).toBeLessThanOrEqual(offsetAtAnswer + 1e-9);
      expect(bounds.high).toBeGreaterThanOrEqual(offsetAtAnswer - roundTrip - 1e-9);
      ours += 500;
    }
  });

  it('starts afresh from a call that contradicts what it learnt: a clock stepped', () => {
    const clock = createClockBounds();
    clock.observe(1_000, 1_002, 1_001 + OFFSET);
    // Their clock stepped back a second: the call's bounds lie wholly below those kept.
    expect(clock.observe(2_000, 2_010, 2_005 + OFFSET - 1_000)).toStrictEqual({ low: OFFSET - 1_005, high: OFFSET - 995 });
    // And forward again.
    expect(clock.observe(3_000, 3_010, 3_005 + OFFSET)).toStrictEqual({ low: OFFSET - 5, high: OFFSET + 5 });
  });
});
