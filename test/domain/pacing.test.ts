import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_AFTER_MS,
  EMPTY_PACE_STATE,
  gateSend,
  MAX_RETRY_AFTER_MS,
  paceLimits,
  reserveSlot,
  retryAfterMs,
  type PaceState,
} from '../../src/domain/pacing.js';

/** Reserves `count` slots one after another at `now`, as a burst of deliveries would. */
function burst(count: number, limits = paceLimits(20, 10_000), now = 1_000_000, state: PaceState = EMPTY_PACE_STATE) {
  const slots: number[] = [];
  for (let i = 0; i < count; i++) {
    const reserved = reserveSlot(now, state, limits, Number.POSITIVE_INFINITY)!;
    slots.push(reserved.slot);
    state = reserved.next;
  }
  return { slots, state };
}

describe('reserveSlot', () => {
  it('spaces POSTs to one target by 1000 / rate ms and a 5% margin, the first at once', () => {
    const { slots } = burst(5);
    expect(slots.map((slot) => Math.round(slot - 1_000_000))).toStrictEqual([0, 53, 105, 158, 210]);
  });

  it('never puts more than `rate` slots in any second', () => {
    const { slots } = burst(300, paceLimits(30, 10_000));
    for (const start of slots) expect(slots.filter((slot) => slot >= start && slot < start + 1000).length).toBeLessThanOrEqual(30);
  });

  it('lets the (account, host) budget absorb a burst of its size, then refill steadily', () => {
    // A high per-target rate, so only the budget (10 per 5 minutes) paces.
    const limits = paceLimits(1000, 10);
    const { slots } = burst(12, limits);
    const offsets = slots.map((slot) => slot - 1_000_000);
    offsets.slice(0, 10).forEach((offset, i) => expect(offset).toBeCloseTo(i * limits.targetIntervalMs, 6)); // the target's pace
    expect(offsets[10]).toBeCloseTo(30_000, 0); // then one per 300 s / 10
    expect(offsets[11]).toBeCloseTo(60_000, 0);
  });

  it('sends nothing to a held target before its hold ends', () => {
    const held = { ...EMPTY_PACE_STATE, holdUntil: 1_005_000 };
    const limits = paceLimits(20, 10_000);
    expect(burst(2, limits, 1_000_000, held).slots).toStrictEqual([1_005_000, 1_005_000 + limits.targetIntervalMs]);
  });

  it('reserves nothing when the slot would come after the latest acceptable time', () => {
    const { state } = burst(20); // the target is booked for the next second
    const limits = paceLimits(20, 10_000);
    const next = 1_000_000 + 20 * limits.targetIntervalMs;
    expect(reserveSlot(1_000_000, state, limits, 1_000_500)).toBeUndefined();
    expect(reserveSlot(1_000_000, state, limits, next)?.slot).toBeCloseTo(next, 6);
  });
});

describe('gateSend', () => {
  const limits = paceLimits(20, 10_000);

  it('lets deliveries that come back late together leave one interval apart', () => {
    let state = EMPTY_PACE_STATE;
    const times = [];
    for (let i = 0; i < 4; i++) {
      const gated = gateSend(5_000, state, limits, Number.POSITIVE_INFINITY)!;
      times.push(gated.at);
      state = gated.next;
    }
    times.forEach((time, i) => expect(time).toBeCloseTo(5_000 + i * limits.targetIntervalMs, 6));
  });

  it('keeps a place in line taken before, behind any hold placed since', () => {
    const state = { ...EMPTY_PACE_STATE, sentTat: 9_000 };
    expect(gateSend(5_000, state, limits, Number.POSITIVE_INFINITY, 5_100)?.at).toBe(5_100);
    const held = { ...state, holdUntil: 7_000 };
    expect(gateSend(5_000, held, limits, Number.POSITIVE_INFINITY, 5_100)?.at).toBe(7_000);
  });

  it('lets a delivery that wakes late leave at once when the last POST left an interval ago, spending no time of another', () => {
    const state = { ...EMPTY_PACE_STATE, sentTat: 5_150, lastSent: 4_990 };
    const late = gateSend(5_100, state, limits, Number.POSITIVE_INFINITY, 5_060)!; // 40 ms late
    expect(late.at).toBe(5_100);
    expect(late.next).toStrictEqual({ ...state, lastSent: 5_100 }); // the line is as it was
  });

  it('spaces departures from the last one that left, so late deliveries never leave together', () => {
    // Three deliveries whose places (5,000, 5,051, 5,102) all passed while the process was busy.
    const places = [5_000, 5_051, 5_102];
    let state = { ...EMPTY_PACE_STATE, sentTat: 5_153 };
    const departures: number[] = [];
    for (let now = 5_400; departures.length < places.length; now++) {
      const gated = gateSend(now, state, limits, Number.POSITIVE_INFINITY, places[departures.length])!;
      state = gated.next;
      if (gated.at <= now) departures.push(now);
    }
    expect(departures[1]! - departures[0]!).toBeGreaterThanOrEqual(limits.targetIntervalMs);
    expect(departures[2]! - departures[1]!).toBeGreaterThanOrEqual(limits.targetIntervalMs);
    expect(departures[0]).toBe(5_400);
  });

  it('never lets a delivery leave during a hold', () => {
    const held = { ...EMPTY_PACE_STATE, holdUntil: 8_000 };
    expect(gateSend(5_000, held, limits, Number.POSITIVE_INFINITY)?.at).toBe(8_000);
    expect(gateSend(5_000, held, limits, 7_999)).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  it.each([
    ['delay seconds', '7', 7_000],
    ['zero', '0', 0],
    ['an HTTP date', 'Mon, 23 Nov 2026 12:00:30 GMT', 30_000],
    ['a date in the past', 'Mon, 23 Nov 2026 11:00:00 GMT', 0],
    ['more than ten minutes', '3600', MAX_RETRY_AFTER_MS],
    ['absent', undefined, DEFAULT_RETRY_AFTER_MS],
    ['unreadable', 'soon', DEFAULT_RETRY_AFTER_MS],
    ['negative', '-5', DEFAULT_RETRY_AFTER_MS],
  ])('reads %s', (_why, header, expected) => {
    expect(retryAfterMs(header, now)).toBe(expected);
  });
});
