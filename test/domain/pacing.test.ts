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
  it('spaces POSTs to one target by 1000 / rate ms and a 2% margin, the first at once', () => {
    const { slots } = burst(5);
    expect(slots.map((slot) => Math.round(slot - 1_000_000))).toStrictEqual([0, 51, 102, 153, 204]);
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

  it('keeps a time taken before unless the target was held since', () => {
    const state = { ...EMPTY_PACE_STATE, sentTat: 9_000 };
    expect(gateSend(5_000, state, limits, Number.POSITIVE_INFINITY, 5_100)?.at).toBe(5_100);
    const held = { ...state, holdUntil: 7_000 };
    expect(gateSend(5_000, held, limits, Number.POSITIVE_INFINITY, 5_100)?.at).toBe(9_000);
  });

  it('gives a delivery running late a new time instead of a stale one, so late ones do not leave together', () => {
    const state = { ...EMPTY_PACE_STATE, sentTat: 5_150 };
    expect(gateSend(5_100, state, limits, Number.POSITIVE_INFINITY, 5_096)?.at).toBe(5_096); // 4 ms late: a timer's jitter, stands
    expect(gateSend(5_100, state, limits, Number.POSITIVE_INFINITY, 5_060)?.at).toBe(5_150); // 40 ms late: stale
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
