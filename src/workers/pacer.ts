import {
  EMPTY_PACE_STATE,
  PACE_WINDOW_MS,
  paceLimits,
  passGate,
  startedOffTime,
  windowSlot,
  type GateAsk,
  type GrantedDeparture,
  type PaceState,
} from '../domain/pacing.js';
import { hostOf } from './targetHosts.js';

export interface GateRequest extends GateAsk {
  targetUrl: string;
  accountId: string;
  /** POSTs per second at this target (the subscription's own, or DELIVERY_RATE_PER_TARGET). */
  perSecond: number;
  /** Longest this delivery may still wait, ms; a time further off is not taken. */
  maxWaitMs: number;
}

export type GateAnswer =
  /**
   * Leave in `inMs` (0: now), or from `fromMs` once claimed (passGate's `from`): the departure is
   * granted and recorded (`granted`, handed back if its POST starts off its time). `place` as for a wait.
   */
  | { kind: 'go'; inMs: number; fromMs: number; place: number; granted: GrantedDeparture }
  /** Come back in `waitMs`; `place` (the pacer's clock) is handed back on the next pass. */
  | { kind: 'wait'; place: number; waitMs: number }
  /** No time within maxWaitMs: the delivery expires unsent. */
  | { kind: 'too_late' };

/**
 * The gate every POST passes just before it leaves (src/domain/pacing.ts): every target sees at
 * most its rate, and every (account, host) at most its budget, however many workers send. In
 * process for the embedded mode; in Redis, shared by all workers, otherwise (redisPacer.ts).
 */
export interface Pacer {
  gate(request: GateRequest): Promise<GateAnswer>;
  /** Nothing more goes to the target for `ms`: it answered 429 or 503 (Retry-After). */
  hold(targetUrl: string, ms: number): Promise<void>;
  /** The POST of the `granted` departure started `byMs` later (negative: sooner) than it allowed: see startedOffTime() in src/domain/pacing.ts. */
  startedOffTime(targetUrl: string, perSecond: number, granted: GrantedDeparture, byMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The (account, host) a budget is kept for: Zapier counts its per-user limit per host. */
export const budgetKey = (accountId: string, targetUrl: string) => `${accountId}\n${hostOf(targetUrl)}`;

/** Turns a gate's verdict, taken at `now` (the pacer's clock, `unitsPerMs` to the ms), into the answer. */
export const gateAnswer = (
  gated: { at: number; from: number; place: number; granted?: GrantedDeparture | undefined } | undefined,
  now: number,
  unitsPerMs = 1,
): GateAnswer => {
  if (!gated) return { kind: 'too_late' };
  const inMs = Math.max(0, (gated.at - now) / unitsPerMs);
  if (!gated.granted) return { kind: 'wait', place: gated.place, waitMs: inMs };
  return { kind: 'go', inMs, fromMs: Math.max(0, (gated.from - now) / unitsPerMs), place: gated.place, granted: gated.granted };
};

/** What the embedded pacer keeps of one target: its state, and its last departures at its rate. */
type TargetState = Pick<PaceState, 'tail' | 'lastSent' | 'sent' | 'holdUntil'>;
const targetPart = ({ tail, lastSent, sent, holdUntil }: PaceState): TargetState => ({ tail, lastSent, sent, holdUntil });

interface TargetPace {
  state: TargetState;
  /** The rate `window` was kept at: a new rate starts a new window (PaceState.sent from 0). */
  perSecond: number;
  /** When each of the last `perSecond` departures counts as having reached the target, by windowSlot. */
  window: number[];
}
/** Longer than any window at the gate (1 POST a second is the slowest rate, and a handshake's allowance). */
const LAST_SENT_MATTERS_MS = 2_000;

/** The embedded mode's pacer: the same rules as the Redis one, kept in this process. */
export function createLocalPacer(hostBudget: number, now: () => number = Date.now): Pacer {
  const targets = new Map<string, TargetPace>();
  const budgets = new Map<string, number>();
  let calls = 0;

  // Entries whose times have all passed say nothing a fresh entry would not; drop them now and then.
  const sweep = (at: number) => {
    for (const [url, { state, window }] of targets) {
      // A late start can date a departure past lastSent: its window entry matters a window after that.
      const windowEnds = window.reduce((latest, countsAt) => Math.max(latest, countsAt + PACE_WINDOW_MS), 0);
      if (Math.max(state.tail, state.holdUntil, state.lastSent + LAST_SENT_MATTERS_MS, windowEnds) < at) targets.delete(url);
    }
    for (const [key, tat] of budgets) if (tat < at) budgets.delete(key);
  };

  /** The target's pace at `perSecond`: a rate it was not kept at starts its window afresh. */
  const paceOf = (targetUrl: string, perSecond: number): TargetPace => {
    const found = targets.get(targetUrl);
    if (found?.perSecond === perSecond) return found;
    const pace = { state: { ...targetPart(EMPTY_PACE_STATE), ...found?.state, sent: 0 }, perSecond, window: [] };
    targets.set(targetUrl, pace);
    return pace;
  };

  return {
    async gate(request) {
      const time = now();
      if (++calls % 10_000 === 0) sweep(time);
      const budget = budgetKey(request.accountId, request.targetUrl);
      const pace = paceOf(request.targetUrl, request.perSecond);
      const rateAgo = pace.window[windowSlot(pace.state.sent + 1, request.perSecond)] ?? 0;
      const state: PaceState = { ...pace.state, rateAgo, hostTat: budgets.get(budget) ?? 0 };
      const gated = passGate(time, state, paceLimits(request.perSecond, hostBudget), time + request.maxWaitMs, request);
      if (gated) {
        pace.state = targetPart(gated.next);
        if (gated.granted) pace.window[windowSlot(gated.granted.seq, request.perSecond)] = gated.granted.countsAt;
        budgets.set(budget, gated.next.hostTat);
      }
      return gateAnswer(gated, time);
    },
    async hold(targetUrl, ms) {
      const pace = targets.get(targetUrl);
      const holdUntil = Math.max(pace?.state.holdUntil ?? 0, now() + ms);
      if (pace) pace.state = { ...pace.state, holdUntil };
      // Held before any departure (a 429 to a process that restarted): its first gate sets its rate.
      else targets.set(targetUrl, { state: { ...targetPart(EMPTY_PACE_STATE), holdUntil }, perSecond: 0, window: [] });
    },
    async startedOffTime(targetUrl, perSecond, granted, byMs) {
      const pace = targets.get(targetUrl);
      if (pace?.perSecond !== perSecond) return;
      const countsAt = startedOffTime(pace.state, granted, byMs, paceLimits(perSecond, hostBudget));
      if (countsAt !== undefined) pace.window[windowSlot(granted.seq, perSecond)] = countsAt;
    },
    close: async () => {},
  };
}
