import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NEW_CONNECTION_ALLOWANCE_MS,
  PACE_WINDOW_MS,
  startOffsetMs,
  tellsStart,
  UNREPORTED_LATENESS_MS,
  type GrantedDeparture,
} from '../../src/domain/pacing.js';
import { createLocalPacer } from '../../src/workers/pacer.js';

const TARGET = 'https://window.example.com/hook';

interface Delivery {
  /** After the previous delivery's arrival at the gate. */
  arrivesAfter: number;
  /** Its claim lead: the soonest it asks to leave. */
  leadMs: number;
  /** How late it comes back for its place after a wait (a busy process). */
  wakesLate: number;
  /** How late its POST's first byte leaves after the soonest it may (a handshake, a busy process). */
  startsLate: number;
  /** Its process has no connection to the target (another worker sent the rest). */
  newConnection: boolean;
}

/**
 * Runs deliveries through the embedded pacer on a clock of its own (the Redis pacer runs the same
 * rules in Lua: test/workers/pacerLead.test.ts). Every step in time order: an arrival or a wake
 * at the gate, or a POST's report as it starts off its time (tellsStart). Each granted delivery is claimed at once
 * and starts as soon as the gate lets it (`from`), plus its own lateness. Returns when each
 * POST's first byte left, in order.
 */
async function firstBytes(rate: number, deliveries: Delivery[]): Promise<number[]> {
  let clock = 0;
  const pacer = createLocalPacer(1_000_000, () => clock);
  type Step = { at: number; delivery: number; place?: number; late?: { granted: GrantedDeparture; byMs: number } };
  const steps: Step[] = [];
  // Long after the epoch: the target is idle at first (a handshake's allowance, as in production).
  let arrival = 1_000_000;
  deliveries.forEach((delivery, i) => steps.push({ at: (arrival += delivery.arrivesAfter), delivery: i }));
  const started: number[] = [];
  while (steps.length > 0) {
    steps.sort((a, b) => a.at - b.at);
    const step = steps.shift()!;
    clock = step.at;
    if (step.late) {
      await pacer.startedOffTime(TARGET, rate, step.late.granted, step.late.byMs);
      continue;
    }
    const delivery = deliveries[step.delivery]!;
    const answer = await pacer.gate({
      targetUrl: TARGET,
      accountId: 'account-1',
      perSecond: rate,
      maxWaitMs: 1e12,
      leadMs: delivery.leadMs,
      place: step.place,
      newConnection: delivery.newConnection,
    });
    if (answer.kind === 'too_late') throw new Error('no departure within a max wait of 1e12 ms');
    if (answer.kind === 'wait') {
      steps.push({ at: clock + answer.waitMs + delivery.wakesLate, delivery: step.delivery, place: answer.place });
      continue;
    }
    const startedAt = clock + answer.fromMs + delivery.startsLate;
    started.push(startedAt);
    const byMs = startOffsetMs(clock + answer.inMs, answer.granted.forHandshake, startedAt);
    if (tellsStart(answer.granted, byMs)) steps.push({ at: startedAt, delivery: step.delivery, late: { granted: answer.granted, byMs } });
  }
  return started.sort((a, b) => a - b);
}

const delivery = (overrides: Partial<Delivery> = {}): Delivery => ({
  arrivesAfter: 0,
  leadMs: 0,
  wakesLate: 0,
  startsLate: 0,
  newConnection: false,
  ...overrides,
});

describe('the pacing window', () => {
  it('never lets `rate` + 1 POSTs start within a window (less the lateness nobody reports), however deliveries arrive, wake and start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 5, 20, 100),
        fc.array(
          fc.record({
            arrivesAfter: fc.integer({ min: 0, max: 400 }),
            leadMs: fc.integer({ min: 0, max: 100 }),
            wakesLate: fc.integer({ min: 0, max: 300 }),
            // Mostly on time; now and then a stall as long as a handshake that ran long.
            startsLate: fc.oneof(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 600 })),
            newConnection: fc.boolean(),
          }),
          { minLength: 1, maxLength: 150 },
        ),
        async (rate, deliveries) => {
          const started = await firstBytes(rate, deliveries);
          expect(started).toHaveLength(deliveries.length);
          for (let i = rate; i < started.length; i++) {
            expect(started[i]! - started[i - rate]!).toBeGreaterThanOrEqual(PACE_WINDOW_MS - UNREPORTED_LATENESS_MS - 1e-6);
          }
        },
      ),
    );
  });

  it('keeps a backlog at its places: departures an interval apart, a window for every `rate`', async () => {
    const started = await firstBytes(
      20,
      Array.from({ length: 100 }, () => delivery()),
    );
    // The first, to an idle target, was given a handshake's allowance: the 21st waits for it, the rest catch up.
    expect(started.at(-1)! - started[0]!).toBeCloseTo((99 * PACE_WINDOW_MS) / 20, 6);
  });

  it('costs a backlog the largest delay in a window, not the sum: three handshakes delay the line by one allowance', async () => {
    // Three processes each open a connection to the target early in a backlog of 100 (rate 20),
    // each handshake taking its whole allowance.
    const opens = new Set([0, 3, 7]);
    const started = await firstBytes(
      20,
      Array.from({ length: 100 }, (_, i) =>
        delivery(opens.has(i) ? { newConnection: true, startsLate: NEW_CONNECTION_ALLOWANCE_MS + UNREPORTED_LATENESS_MS } : {}),
      ),
    );
    const span = started.at(-1)! - started[0]!;
    expect(span).toBeLessThanOrEqual((99 * PACE_WINDOW_MS) / 20 + NEW_CONNECTION_ALLOWANCE_MS + 1e-6);
    // Spaced an interval after the last, each would have passed on its allowance: three of them.
    expect(span).toBeLessThan((99 * PACE_WINDOW_MS) / 20 + 2 * NEW_CONNECTION_ALLOWANCE_MS);
  });

  it('spaces the departure `rate` after a handshake from when its POST left, not from its whole allowance', async () => {
    // Three processes each open a connection to the target early in a backlog of 100 (rate 20), in 30 ms.
    const opens = [0, 3, 7];
    const started = await firstBytes(
      20,
      Array.from({ length: 100 }, (_, i) => delivery(opens.includes(i) ? { newConnection: true, startsLate: 30 } : {})),
    );
    // A window after each (less what goes unreported, as for any POST); counted from its whole
    // allowance, the one `rate` after it would leave NEW_CONNECTION_ALLOWANCE_MS, less those 30 ms, later.
    for (const i of opens) expect(started[i + 20]! - started[i]!).toBeCloseTo(PACE_WINDOW_MS - UNREPORTED_LATENESS_MS, 6);
  });

  it('keeps a target whose late start dated its window past its last departure, through a sweep of idle targets', async () => {
    let clock = 1_000_000;
    const pacer = createLocalPacer(1_000_000, () => clock);
    const ask = (targetUrl: string) => pacer.gate({ targetUrl, accountId: 'account-1', perSecond: 1, maxWaitMs: 1e12, leadMs: 0, newConnection: false });
    const first = await ask(TARGET);
    if (first.kind !== 'go') throw new Error('the first departure to an idle target is granted');
    // Its POST starts 1.5 s late (a stalled process): it counts from then. (Granted to an idle
    // target, it was spaced for a handshake, asked or not: it counts from NEW_CONNECTION_ALLOWANCE_MS after its time.)
    expect(first.granted).toStrictEqual({ seq: 1, countsAt: clock + NEW_CONNECTION_ALLOWANCE_MS, forHandshake: true });
    const countsAt = first.granted.countsAt + 1_500;
    await pacer.startedOffTime(TARGET, 1, first.granted, 1_500);
    clock += 2_100; // past its departure by more than any interval; within a window of its start
    // Enough gates elsewhere for the embedded pacer to sweep the targets it no longer needs.
    for (let i = 0; i < 10_000; i++) await ask(`https://other-${i % 50}.example.com/hook`);
    const next = await ask(TARGET);
    expect(next.kind === 'go' ? clock + next.inMs : next.kind === 'wait' ? clock + next.waitMs : Number.NaN).toBeGreaterThanOrEqual(countsAt + PACE_WINDOW_MS);
  });
});
