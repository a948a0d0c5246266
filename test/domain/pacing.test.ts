import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createClaimLead,
  createTurnCounter,
  DEFAULT_RETRY_AFTER_MS,
  EMPTY_PACE_STATE,
  IDLE_CONNECTION_MS,
  JITTER_ALLOWANCE_MS,
  LATE_DEPARTURE_MS,
  LONGEST_CLAIM_LEAD_MS,
  NEW_CONNECTION_ALLOWANCE_MS,
  MAX_RETRY_AFTER_MS,
  paceLimits,
  passGate,
  retryAfterMs,
  SHORTEST_CLAIM_LEAD_MS,
  SOON_MS,
  accountsLateStarts,
  startedLate,
  startLatenessMs,
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
    expect(arrivals(2, limits, 1_000_000, { ...EMPTY_PACE_STATE, holdUntil: 1_005_000 }).places).toStrictEqual([1_005_000, 1_005_000 + limits.targetIntervalMs]);
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

  it('spaces the departure after a new connection’s by its handshake allowance too', () => {
    const first = passGate(5_000, EMPTY_PACE_STATE, limits, NEVER)!; // nothing sent before: a new connection
    expect(first).toMatchObject({ at: 5_000, granted: { forHandshake: true }, next: { lastSent: 5_000 + NEW_CONNECTION_ALLOWANCE_MS } });
    expect(passGate(5_000, first.next, limits, NEVER)?.at).toBe(5_000 + NEW_CONNECTION_ALLOWANCE_MS + limits.targetIntervalMs);
    const idle = { ...EMPTY_PACE_STATE, lastSent: 5_000 - IDLE_CONNECTION_MS - 1 };
    expect(passGate(5_000, idle, limits, NEVER)?.next.lastSent).toBe(5_000 + NEW_CONNECTION_ALLOWANCE_MS);
    // A busy target, but this process has no connection to it yet (another worker sent the rest).
    const busy = { ...EMPTY_PACE_STATE, lastSent: 4_900 };
    expect(passGate(5_000, busy, limits, NEVER, { newConnection: true })?.next.lastSent).toBe(5_000 + NEW_CONNECTION_ALLOWANCE_MS);
    expect(passGate(5_000, busy, limits, NEVER, { newConnection: false })?.next.lastSent).toBe(5_000);
  });

  it('grants a departure no sooner than the lead, and lets it leave up to the lead early once claimed, but never within an interval of the last or a hold', () => {
    const warm = { ...EMPTY_PACE_STATE, lastSent: 4_900 }; // a connection is open
    // The last POST left long enough ago: the departure is the lead away; once claimed it may leave at once.
    const free = passGate(5_000, warm, limits, NEVER, { leadMs: 30 })!;
    expect(free).toMatchObject({ at: 5_030, from: 5_000, granted: { seq: 1, lastSent: 5_030 } });
    // The next is spaced from the recorded departure, not from when the first really left.
    expect(passGate(5_000, free.next, limits, NEVER, { leadMs: 30 })).toMatchObject({ at: 5_030 + limits.targetIntervalMs, from: 5_030 + limits.targetIntervalMs });
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

  it('never lets more than `rate` POSTs leave in any window of 1000 ms plus the allowance, however deliveries arrive and wake', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 5, 20, 100),
        // Deliveries arriving at the gate, their claim leads, and how late each wakes for its place (a busy process).
        fc.array(
          fc.record({ arrivesAfter: fc.integer({ min: 0, max: 400 }), leadMs: fc.integer({ min: 0, max: 100 }), wakesLate: fc.integer({ min: 0, max: 300 }) }),
          { minLength: 1, maxLength: 120 },
        ),
        (rate, deliveries) => {
          const limits = paceLimits(rate, 1_000_000);
          let state = EMPTY_PACE_STATE;
          // Every pass at the gate, in time order: a delivery's arrival, then its wakes.
          const passes: { at: number; delivery: number; place?: number }[] = [];
          let arrival = 0;
          deliveries.forEach((delivery, i) => passes.push({ at: (arrival += delivery.arrivesAfter), delivery: i }));
          const departures: number[] = [];
          while (passes.length > 0) {
            passes.sort((a, b) => a.at - b.at);
            const pass = passes.shift()!;
            const gated = passGate(pass.at, state, limits, NEVER, { place: pass.place, leadMs: deliveries[pass.delivery]!.leadMs })!;
            state = gated.next;
            // Claimed at once: it leaves as early as the gate lets it.
            if (gated.granted) departures.push(gated.from);
            else passes.push({ at: gated.at + deliveries[pass.delivery]!.wakesLate, delivery: pass.delivery, place: gated.place });
          }
          expect(departures).toHaveLength(deliveries.length);
          departures.sort((a, b) => a - b);
          for (let i = rate; i < departures.length; i++) {
            expect(departures[i]! - departures[i - rate]!).toBeGreaterThanOrEqual(1000 + JITTER_ALLOWANCE_MS - 1e-6);
          }
        },
      ),
    );
  });
});

describe('startedLate: a POST that left later than its departure allowed', () => {
  it('spaces every departure granted from then on that much further, and moves nothing twice', () => {
    const limits = paceLimits(5, 1_000_000);
    const interval = limits.targetIntervalMs;
    // Three departures granted, an interval apart; the first POST starts 120 ms late.
    const state = { lastSent: 10_000 + 2 * interval, sent: 3 };
    const first = { seq: 1, lastSent: 10_000, forHandshake: false };
    const second = { seq: 2, lastSent: 10_000 + interval, forHandshake: false };
    const moved = startedLate(state, first, 120, limits);
    expect(moved).toBe(state.lastSent + 120);
    // The second, late by as much at the same moment, needs no more: the line moves once.
    expect(startedLate({ ...state, lastSent: moved }, second, 120, limits)).toBe(moved);
    // Later by more, it moves the line by the difference only.
    expect(startedLate({ ...state, lastSent: moved }, second, 200, limits)).toBe(moved + 80);
    // Never sooner than it was (a hold or an idle spell spaced it further).
    expect(startedLate({ lastSent: 20_000, sent: 3 }, first, 120, limits)).toBe(20_000);
  });

  it('moves nothing once `rate` departures after the late one were granted: none of them can move', () => {
    const limits = paceLimits(5, 1_000_000);
    const state = { lastSent: 10_000 + 5 * limits.targetIntervalMs, sent: 6 };
    const first = { seq: 1, lastSent: 10_000, forHandshake: false };
    expect(startedLate(state, first, 600, limits)).toBe(state.lastSent);
    expect(startedLate({ ...state, sent: 5 }, first, 600, limits)).toBeGreaterThan(state.lastSent);
  });

  it('counts a start as late past UNREPORTED_LATENESS_MS after its departure, or after its handshake allowance', () => {
    expect(UNREPORTED_LATENESS_MS).toBeLessThanOrEqual(JITTER_ALLOWANCE_MS / 4);
    expect(startLatenessMs(10_000, false, 10_000 + UNREPORTED_LATENESS_MS)).toBe(0);
    expect(startLatenessMs(10_000, false, 10_035)).toBe(35 - UNREPORTED_LATENESS_MS);
    expect(startLatenessMs(10_000, true, 10_000 + NEW_CONNECTION_ALLOWANCE_MS + UNREPORTED_LATENESS_MS)).toBe(0);
    expect(startLatenessMs(10_000, true, 10_400)).toBe(400 - NEW_CONNECTION_ALLOWANCE_MS - UNREPORTED_LATENESS_MS);
  });

  it('is accounted up to the fastest pace a subscription may ask for, and not for a faster cap on throughput', () => {
    expect([1, 5, 20, 100, 1_000].map(accountsLateStarts)).toStrictEqual([true, true, true, true, true]);
    expect([1_001, 1_000_000].map(accountsLateStarts)).toStrictEqual([false, false]);
  });

  it('keeps any `rate` + 1 POSTs a window apart from when they really left, when some start late and say so as they start', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 5, 20, 100),
        // Deliveries arriving at the gate, their claim leads, and how late each POST's first byte
        // leaves after the soonest it may (a long handshake, a busy process).
        fc.array(
          fc.record({ arrivesAfter: fc.integer({ min: 0, max: 400 }), leadMs: fc.integer({ min: 0, max: 100 }), startsLate: fc.integer({ min: 0, max: 600 }) }),
          { minLength: 1, maxLength: 120 },
        ),
        (rate, deliveries) => {
          const limits = paceLimits(rate, 1_000_000);
          // Every step in time order: a pass at the gate, or a late POST's report as it starts.
          const steps: { at: number; delivery: number; place?: number; late?: { granted: GrantedDeparture; byMs: number } }[] = [];
          let arrival = 0;
          deliveries.forEach((delivery, i) => steps.push({ at: (arrival += delivery.arrivesAfter), delivery: i }));
          let state = EMPTY_PACE_STATE;
          // When each POST counts as having left: its departure, or, when it reported a late start,
          // its start less the lateness every departure is allowed.
          const left: number[] = [];
          while (steps.length > 0) {
            steps.sort((a, b) => a.at - b.at);
            const step = steps.shift()!;
            if (step.late !== undefined) {
              state = { ...state, lastSent: startedLate(state, step.late.granted, step.late.byMs, limits) };
              continue;
            }
            const gated = passGate(step.at, state, limits, NEVER, { place: step.place, leadMs: deliveries[step.delivery]!.leadMs })!;
            state = gated.next;
            if (!gated.granted) {
              steps.push({ at: gated.at, delivery: step.delivery, place: gated.place });
              continue;
            }
            const granted = gated.granted!;
            const startedAt = gated.from + deliveries[step.delivery]!.startsLate;
            // Spaced for a handshake when the target was idle: the gate recorded it past its departure.
            const lateByMs = startLatenessMs(gated.at, granted.forHandshake, startedAt);
            left.push(lateByMs > 0 ? startedAt - UNREPORTED_LATENESS_MS : Math.min(startedAt, gated.at));
            if (lateByMs > 0) steps.push({ at: startedAt, delivery: step.delivery, late: { granted, byMs: lateByMs } });
          }
          left.sort((a, b) => a - b);
          for (let i = rate; i < left.length; i++) expect(left[i]! - left[i - rate]!).toBeGreaterThanOrEqual(1000 + JITTER_ALLOWANCE_MS - 1e-6);
        },
      ),
    );
  });
});

describe('turns', () => {
  it("numbers an account's deliveries within each second they are due, apart from other accounts'", () => {
    const turnOf = createTurnCounter();
    const now = 10_000;
    expect([turnOf('busy', 10_100, now), turnOf('busy', 10_900, now), turnOf('quiet', 10_500, now), turnOf('busy', 11_000, now)]).toStrictEqual([1, 2, 1, 1]);
    // A second long past is forgotten once the clock moves on; a future one is kept.
    expect(turnOf('busy', 13_000, 12_500)).toBe(1);
    expect(turnOf('busy', 13_200, 12_600)).toBe(2);
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
