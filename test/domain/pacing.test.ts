import { describe, expect, it } from 'vitest';
import {
  createClaimLead,
  EMPTY_PACE_STATE,
  IDLE_CONNECTION_MS,
  JITTER_ALLOWANCE_MS,
  LATE_DEPARTURE_MS,
  LONGEST_CLAIM_LEAD_MS,
  NEW_CONNECTION_ALLOWANCE_MS,
  paceLimits,
  passGate,
  SHORTEST_CLAIM_LEAD_MS,
  SOON_MS,
  heldToDepartureTimes,
  PACE_WINDOW_MS,
  windowBound,
  startedOffTime,
  startOffsetMs,
  tellsStart,
  type GrantedDeparture,
  UNREPORTED_LATENESS_MS,
  type PaceState,
} from '../../src/domain/pacing.js';

const NEVER = Number.POSITIVE_INFINITY;

/** `count` deliveries arriving at the gate at `now`, each taking a place: their places, and the state after. */
function arrivals(count: number, limits = paceLimits(20, 10_000), now = 1_000_000, state: PaceState = EMPTY_PACE_STATE) {
  const places: number[] = [];
  for (let i = 0; i < count; i++) {
    const gated = passGate(now, state, limits, NEVER)!;
    places.push(gated.place);
    state = gated.next;
  }
  return { places, state };
}

describe('passGate: taking a place', () => {
  it('spaces places at one target by (1000 ms + the jitter allowance) / rate, the first at once', () => {
    const { places } = arrivals(5);
    const interval = (1000 + JITTER_ALLOWANCE_MS) / 20;
    expect(places.map((place) => place - 1_000_000)).toStrictEqual([0, 1, 2, 3, 4].map((i) => i * interval));
  });

  it('lets the (account, host) budget absorb a burst of its size, then refill steadily', () => {
    // A high per-target rate, so only the budget (10 per 5 minutes) paces.
    const limits = paceLimits(1000, 10);
    const offsets = arrivals(12, limits).places.map((place) => place - 1_000_000);
    offsets.slice(0, 10).forEach((offset, i) => expect(offset).toBeCloseTo(i * limits.targetIntervalMs, 6)); // the target's pace
    expect(offsets[10]).toBeCloseTo(30_000, 0); // then one per 300 s / 10
    expect(offsets[11]).toBeCloseTo(60_000, 0);
  });

  it('gives no place before a hold ends', () => {
    const limits = paceLimits(20, 10_000);
    expect(arrivals(2, limits, 1_000_000, { ...EMPTY_PACE_STATE, holdUntil: 1_005_000 }).places).toStrictEqual([
      1_005_000,
      1_005_000 + limits.targetIntervalMs,
    ]);
  });

  it('takes nothing when the place would come after the latest acceptable time', () => {
    const limits = paceLimits(20, 10_000);
    const { state } = arrivals(20, limits); // the target is booked for the next second
    expect(passGate(1_000_000, state, limits, 1_000_500)).toBeUndefined();
    expect(passGate(1_000_000, state, limits, 2_000_000)?.place).toBeCloseTo(1_000_000 + 20 * limits.targetIntervalMs, 6);
  });
});

describe('passGate: leaving', () => {
  const limits = paceLimits(20, 10_000);

  it('grants a departure due within SOON_MS and records it; a later one comes back for its place', () => {
    const warm = { ...EMPTY_PACE_STATE, lastSent: 4_980 }; // a POST left 20 ms ago: the connection is open
    const first = passGate(5_000, warm, limits, NEVER)!;
    expect(first).toMatchObject({ at: 4_980 + limits.targetIntervalMs, granted: { seq: 1 }, next: { lastSent: 4_980 + limits.targetIntervalMs, sent: 1 } });
    let state = first.next;
    for (let i = 0; i < 4; i++) state = passGate(5_000, state, limits, NEVER)!.next;
    const later = passGate(5_000, state, limits, NEVER)!;
    expect(later.at - 5_000).toBeGreaterThan(SOON_MS);
    expect(later).toMatchObject({ next: { lastSent: state.lastSent, sent: state.sent } });
    expect(later.granted).toBeUndefined();
  });

  it('counts a departure that opens a connection as reaching the target a handshake’s allowance later', () => {
    const first = passGate(5_000, EMPTY_PACE_STATE, limits, NEVER)!; // nothing sent before: a new connection
    expect(first).toMatchObject({ at: 5_000, granted: { forHandshake: true, countsAt: 5_000 + NEW_CONNECTION_ALLOWANCE_MS }, next: { lastSent: 5_000 } });
    // The allowance binds the departure `rate` after it (windowBound), not the next.
    expect(passGate(5_000, first.next, limits, NEVER)?.at).toBe(5_000 + limits.targetIntervalMs);
    const idle = { ...EMPTY_PACE_STATE, lastSent: 5_000 - IDLE_CONNECTION_MS - 1 };
    expect(passGate(5_000, idle, limits, NEVER)?.granted?.countsAt).toBe(5_000 + NEW_CONNECTION_ALLOWANCE_MS);
    // A busy target, but this process has no connection to it yet (another worker sent the rest).
    const busy = { ...EMPTY_PACE_STATE, lastSent: 4_900 };
    expect(passGate(5_000, busy, limits, NEVER, { newConnection: true })?.granted).toStrictEqual({
      seq: 1,
      countsAt: 5_000 + NEW_CONNECTION_ALLOWANCE_MS,
      forHandshake: true,
    });
    expect(passGate(5_000, busy, limits, NEVER, { newConnection: false })?.granted).toStrictEqual({ seq: 1, countsAt: 5_000, forHandshake: false });
  });

  it('grants a departure no sooner than the lead, and lets it leave up to the lead early once claimed, but never within an interval of the last or a hold', () => {
    const warm = { ...EMPTY_PACE_STATE, lastSent: 4_900 }; // a connection is open
    // The last POST left long enough ago: the departure is the lead away; once claimed it may leave at once.
    const free = passGate(5_000, warm, limits, NEVER, { leadMs: 30 })!;
    expect(free).toMatchObject({ at: 5_030, from: 5_000, granted: { seq: 1, countsAt: 5_030 } });
    // The next is spaced from the recorded departure, not from when the first really left.
    expect(passGate(5_000, free.next, limits, NEVER, { leadMs: 30 })).toMatchObject({
      at: 5_030 + limits.targetIntervalMs,
      from: 5_030 + limits.targetIntervalMs,
    });
    // One left 40 ms ago: an interval (54 ms) after it comes within the lead, and bounds how early.
    expect(passGate(5_000, { ...warm, lastSent: 4_960 }, limits, NEVER, { leadMs: 30 })).toMatchObject({ at: 5_030, from: 4_960 + limits.targetIntervalMs });
    // One 10 ms ago: the interval binds both.
    expect(passGate(5_000, { ...warm, lastSent: 4_990 }, limits, NEVER, { leadMs: 30 })).toMatchObject({
      at: 4_990 + limits.targetIntervalMs,
      from: 4_990 + limits.targetIntervalMs,
    });
    // A hold ending within the lead: never before it ends.
    expect(passGate(5_000, { ...warm, holdUntil: 5_010 }, limits, NEVER, { leadMs: 30 })).toMatchObject({ at: 5_030, from: 5_010 });
  });

  it('keeps a place taken before, behind any hold placed since', () => {
    const state = { ...EMPTY_PACE_STATE, tail: 9_000 };
    const kept = passGate(5_000, state, limits, NEVER, { place: 5_400 })!;
    expect(kept).toMatchObject({ at: 5_400, next: state });
    expect(kept.granted).toBeUndefined();
    expect(passGate(5_000, { ...state, holdUntil: 7_000 }, limits, NEVER, { place: 5_400 })?.at).toBe(7_000);
  });

  it('lets a delivery that wakes late leave at once when the last POST left an interval ago, spending no time of another', () => {
    const state = { ...EMPTY_PACE_STATE, tail: 5_150, lastSent: 4_990 };
    const late = passGate(5_100, state, limits, NEVER, { place: 5_060 })!; // 40 ms late
    expect(late.at).toBe(5_100);
    expect(late.next).toStrictEqual({ ...state, lastSent: 5_100, sent: 1 }); // the line is as it was
  });

  it('never lets a delivery leave during a hold, nor wait past its latest time', () => {
    const held = { ...EMPTY_PACE_STATE, holdUntil: 8_000 };
    expect(passGate(5_000, held, limits, NEVER)?.at).toBe(8_000);
    expect(passGate(5_000, held, limits, 7_999)).toBeUndefined();
  });
});

describe('windowBound: the soonest the next departure may leave', () => {
  const limits = paceLimits(5, 1_000_000);
  const interval = limits.targetIntervalMs;

  it('spaces the first `rate` departures at a rate an interval after the last', () => {
    expect(windowBound({ lastSent: 10_000, sent: 4, rateAgo: 0 }, limits)).toBe(10_000 + interval);
  });

  it('then leaves a window after the departure `rate` before counts, and half an interval after the last', () => {
    // Keeping to their places: the window and the interval agree.
    expect(windowBound({ lastSent: 10_000, sent: 9, rateAgo: 10_000 + interval - PACE_WINDOW_MS }, limits)).toBe(10_000 + interval);
    // The one `rate` before was late (a handshake): the window binds.
    expect(windowBound({ lastSent: 10_000, sent: 9, rateAgo: 9_500 }, limits)).toBe(9_500 + PACE_WINDOW_MS);
    // The last was late, those before it not: the next catches up at twice the rate.
    expect(windowBound({ lastSent: 10_000, sent: 9, rateAgo: 8_000 }, limits)).toBe(10_000 + interval / 2);
  });

  it('keeps no window for a rate no receiver counts to: an interval after the last', () => {
    const cap = paceLimits(1_000_000, 1_000_000);
    expect(cap.keepsWindow).toBe(false);
    expect(windowBound({ lastSent: 10_000, sent: 5_000_000, rateAgo: 0 }, cap)).toBe(10_000 + cap.targetIntervalMs);
  });
});

describe("startedOffTime: a POST that left later than its departure allowed, or a handshake's sooner", () => {
  it('counts the late departure from when it really reached the target, and two late together by as much once', () => {
    const limits = paceLimits(5, 1_000_000);
    const first: GrantedDeparture = { seq: 1, countsAt: 10_000, forHandshake: false };
    expect(startedOffTime({ sent: 3 }, first, 120, limits)).toBe(10_120);
    // Its handshake's allowance is counted already: the lateness is past it.
    expect(startedOffTime({ sent: 3 }, { seq: 1, countsAt: 10_000 + NEW_CONNECTION_ALLOWANCE_MS, forHandshake: true }, 120, limits)).toBe(
      10_000 + NEW_CONNECTION_ALLOWANCE_MS + 120,
    );
  });

  it('moves nothing once `rate` departures after the late one were granted (the one it bound has left), nor after a change of rate', () => {
    const limits = paceLimits(5, 1_000_000);
    const first: GrantedDeparture = { seq: 1, countsAt: 10_000, forHandshake: false };
    expect(startedOffTime({ sent: 6 }, first, 600, limits)).toBeUndefined();
    expect(startedOffTime({ sent: 5 }, first, 600, limits)).toBe(10_600);
    // The rate changed since: departures are counted from 0 again.
    expect(startedOffTime({ sent: 0 }, { ...first, seq: 4 }, 600, limits)).toBeUndefined();
  });

  it('counts a start as late past UNREPORTED_LATENESS_MS after its departure, or after its handshake allowance', () => {
    expect(UNREPORTED_LATENESS_MS).toBeLessThanOrEqual(JITTER_ALLOWANCE_MS / 4);
    expect(startOffsetMs(10_000, false, 10_000 + UNREPORTED_LATENESS_MS)).toBe(0);
    expect(startOffsetMs(10_000, false, 10_035)).toBe(35 - UNREPORTED_LATENESS_MS);
    expect(startOffsetMs(10_000, true, 10_000 + NEW_CONNECTION_ALLOWANCE_MS + UNREPORTED_LATENESS_MS)).toBe(0);
    expect(startOffsetMs(10_000, true, 10_400)).toBe(400 - NEW_CONNECTION_ALLOWANCE_MS - UNREPORTED_LATENESS_MS);
  });

  it("counts a handshake's departure from when its POST really started when the handshake took less than its allowance", () => {
    const limits = paceLimits(5, 1_000_000);
    const opened: GrantedDeparture = { seq: 1, countsAt: 10_000 + NEW_CONNECTION_ALLOWANCE_MS, forHandshake: true };
    // Its first byte left 30 ms after its departure: it counts from UNREPORTED_LATENESS_MS before then, as any POST.
    const byMs = startOffsetMs(10_000, true, 10_030);
    expect(byMs).toBe(30 - NEW_CONNECTION_ALLOWANCE_MS - UNREPORTED_LATENESS_MS);
    expect(tellsStart(opened, byMs)).toBe(true);
    expect(startedOffTime({ sent: 3 }, opened, byMs, limits)).toBe(10_030 - UNREPORTED_LATENESS_MS);
  });

  it("tells the pacer of late starts, and of early ones only for a handshake's departure", () => {
    const [plain, opened] = [{ forHandshake: false }, { forHandshake: true }];
    expect([tellsStart(plain, 5), tellsStart(plain, 0), tellsStart(plain, -5)]).toStrictEqual([true, false, false]);
    expect([tellsStart(opened, 5), tellsStart(opened, 0), tellsStart(opened, -5)]).toStrictEqual([true, false, true]);
  });

  it("holds a target to its departures' times up to the fastest pace a subscription may ask for, not at a faster cap on throughput", () => {
    expect([1, 5, 20, 100, 1_000].map(heldToDepartureTimes)).toStrictEqual([true, true, true, true, true]);
    expect([1_001, 1_000_000].map(heldToDepartureTimes)).toStrictEqual([false, false]);
  });
});

describe('the claim lead', () => {
  const leadAfter = (claimsMs: number[]) => {
    const lead = createClaimLead();
    for (const ms of claimsMs) lead.observe(ms);
    return lead.ms;
  };

  it('starts at its shortest, and stays there while claims are quick', () => {
    expect(leadAfter([])).toBe(SHORTEST_CLAIM_LEAD_MS);
    expect(leadAfter(Array(50).fill(2))).toBe(SHORTEST_CLAIM_LEAD_MS);
  });

  it('grows past what claims take once they slow, so a claim slower than the lateness allowance no longer misses every departure', () => {
    const slow = 3 * LATE_DEPARTURE_MS;
    expect(leadAfter(Array(50).fill(slow))).toBeGreaterThanOrEqual(slow - 1);
    // Jittery claims: the lead covers their spread, not only their mean.
    const jittery = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? 20 : 100));
    expect(leadAfter(jittery)).toBeGreaterThan(100);
  });

  it('comes back down when claims are quick again, and never passes its longest', () => {
    expect(leadAfter(Array(50).fill(60_000))).toBe(LONGEST_CLAIM_LEAD_MS);
    expect(leadAfter([...Array(50).fill(500), ...Array(80).fill(5)])).toBeLessThan(2 * SHORTEST_CLAIM_LEAD_MS);
  });
});
