import { EMPTY_PACE_STATE, paceLimits, passGate, startedLate, type GateAsk, type GrantedDeparture, type PaceState } from '../domain/pacing.js';

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
   * granted and recorded (`granted`, handed back if its POST starts late). `place` as for a wait.
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
  /** The POST of the `granted` departure started `byMs` later than it allowed: see startedLate() in src/domain/pacing.ts. */
  startedLate(targetUrl: string, perSecond: number, granted: GrantedDeparture, byMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The (account, host) a budget is kept for: Zapier counts its per-user limit per host. */
export const budgetKey = (accountId: string, targetUrl: string) => `${accountId}\n${new URL(targetUrl).host}`;

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

type TargetState = Omit<PaceState, 'hostTat'>;
/** Longer than any interval at the gate (1 POST a second is the slowest default rate). */
const LAST_SENT_MATTERS_MS = 2_000;

/** The embedded mode's pacer: the same rules as the Redis one, kept in this process. */
export function createLocalPacer(hostBudget: number, now: () => number = Date.now): Pacer {
  const targets = new Map<string, TargetState>();
  const budgets = new Map<string, number>();
  let calls = 0;

  // Entries whose times have all passed say nothing a fresh entry would not; drop them now and then.
  const sweep = (at: number) => {
    for (const [url, t] of targets) if (Math.max(t.tail, t.holdUntil, t.lastSent + LAST_SENT_MATTERS_MS) < at) targets.delete(url);
    for (const [key, tat] of budgets) if (tat < at) budgets.delete(key);
  };

  return {
    async gate(request) {
      const time = now();
      if (++calls % 10_000 === 0) sweep(time);
      const budget = budgetKey(request.accountId, request.targetUrl);
      const state: PaceState = { ...EMPTY_PACE_STATE, ...targets.get(request.targetUrl), hostTat: budgets.get(budget) ?? 0 };
      const gated = passGate(time, state, paceLimits(request.perSecond, hostBudget), time + request.maxWaitMs, request);
      if (gated) {
        const { hostTat, ...target } = gated.next;
        targets.set(request.targetUrl, target);
        budgets.set(budget, hostTat);
      }
      return gateAnswer(gated, time);
    },
    async hold(targetUrl, ms) {
      const target = { ...EMPTY_PACE_STATE, ...targets.get(targetUrl) };
      targets.set(targetUrl, { ...target, holdUntil: Math.max(target.holdUntil, now() + ms) });
    },
    async startedLate(targetUrl, perSecond, granted, byMs) {
      const target = targets.get(targetUrl);
      if (target) targets.set(targetUrl, { ...target, lastSent: startedLate(target, granted, byMs, paceLimits(perSecond, hostBudget)) });
    },
    close: async () => {},
  };
}
