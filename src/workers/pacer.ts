import { EMPTY_PACE_STATE, gateSend, paceLimits, reserveSlot, TURN_WINDOW_MS, type PaceState } from '../domain/pacing.js';

export interface SlotRequest {
  targetUrl: string;
  accountId: string;
  /** POSTs per second at this target (the subscription's own, or DELIVERY_RATE_PER_TARGET). */
  perSecond: number;
  /** Longest this delivery may still wait, ms; a time further off is not taken. */
  maxWaitMs: number;
}

export type SlotAnswer =
  /** `at` is in the pacer's own clock (hand it back as `taken`); `waitMs` is how long from now. */
  | { kind: 'slot'; at: number; waitMs: number }
  /** Nothing within maxWaitMs: the delivery expires unsent. */
  | { kind: 'too_late' };

/** A schedule's answer also gives the delivery's turn among its account's (src/domain/pacing.ts). */
export type ScheduleAnswer = { kind: 'slot'; at: number; waitMs: number; turn: number } | { kind: 'too_late' };

/**
 * Hands out send times so that every target sees at most its rate, and every (account, host) at
 * most its budget, however many workers send (see src/domain/pacing.ts for the two chains). In
 * process for the embedded mode; in Redis, shared by all workers, otherwise (redisPacer.ts).
 */
export interface Pacer {
  /** The schedule: when a newly queued delivery should come back to be sent, and its turn then. */
  schedule(request: SlotRequest): Promise<ScheduleAnswer>;
  /** The gate: when a delivery whose time has come may leave. `taken`: its place in line there, from an earlier run. */
  gate(request: SlotRequest & { taken?: number | undefined }): Promise<SlotAnswer>;
  /** Nothing more goes to the target for `ms`: it answered 429 or 503 (Retry-After). */
  hold(targetUrl: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The (account, host) a budget is kept for: Zapier counts its per-user limit per host. */
export const budgetKey = (accountId: string, targetUrl: string) => `${accountId}\n${new URL(targetUrl).host}`;

type TargetState = Pick<PaceState, 'targetTat' | 'sentTat' | 'lastSent' | 'holdUntil'>;
/** Longer than any interval at the gate (1 POST a second is the slowest rate). */
const LAST_SENT_MATTERS_MS = 2_000;

/** The embedded mode's pacer: the same rules as the Redis one, kept in this process. */
export function createLocalPacer(hostBudget: number, now: () => number = Date.now): Pacer {
  const targets = new Map<string, TargetState>();
  const budgets = new Map<string, number>();
  const turns = new Map<string, { window: number; taken: number }>(); // per (account, second)
  let calls = 0;

  // Entries whose times have all passed say nothing a fresh entry would not; drop them now and then.
  const sweep = (at: number) => {
    for (const [url, t] of targets) if (Math.max(t.targetTat, t.sentTat, t.holdUntil, t.lastSent + LAST_SENT_MATTERS_MS) < at) targets.delete(url);
    for (const [key, tat] of budgets) if (tat < at) budgets.delete(key);
    for (const [key, turn] of turns) if ((turn.window + 1) * TURN_WINDOW_MS < at) turns.delete(key);
  };
  const takeTurn = (accountId: string, slot: number) => {
    const window = Math.floor(slot / TURN_WINDOW_MS);
    const key = `${accountId}\n${window}`;
    const taken = (turns.get(key)?.taken ?? 0) + 1;
    turns.set(key, { window, taken });
    return taken;
  };
  const stateOf = (request: SlotRequest): PaceState => ({
    ...EMPTY_PACE_STATE,
    ...targets.get(request.targetUrl),
    hostTat: budgets.get(budgetKey(request.accountId, request.targetUrl)) ?? 0,
  });
  const keep = (request: SlotRequest, { targetTat, sentTat, lastSent, holdUntil, hostTat }: PaceState) => {
    targets.set(request.targetUrl, { targetTat, sentTat, lastSent, holdUntil });
    budgets.set(budgetKey(request.accountId, request.targetUrl), hostTat);
  };
  const answer = (at: number, time: number): SlotAnswer => ({ kind: 'slot', at, waitMs: Math.max(0, at - time) });

  return {
    async schedule(request) {
      const time = now();
      if (++calls % 10_000 === 0) sweep(time);
      const reserved = reserveSlot(time, stateOf(request), paceLimits(request.perSecond, hostBudget), time + request.maxWaitMs);
      if (!reserved) return { kind: 'too_late' };
      keep(request, reserved.next);
      return { ...answer(reserved.slot, time), turn: takeTurn(request.accountId, reserved.slot) };
    },
    async gate(request) {
      const time = now();
      const gated = gateSend(time, stateOf(request), paceLimits(request.perSecond, hostBudget), time + request.maxWaitMs, request.taken);
      if (!gated) return { kind: 'too_late' };
      keep(request, gated.next);
      return answer(gated.at, time);
    },
    async hold(targetUrl, ms) {
      const target = { ...EMPTY_PACE_STATE, ...targets.get(targetUrl) };
      targets.set(targetUrl, { ...target, holdUntil: Math.max(target.holdUntil, now() + ms) });
    },
    close: async () => {},
  };
}
