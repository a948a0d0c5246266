import { EMPTY_PACE_STATE, paceLimits, reserveSlot, type PaceState } from '../domain/pacing.js';

export interface SlotRequest {
  targetUrl: string;
  accountId: string;
  /** POSTs per second at this target (the subscription's own, or DELIVERY_RATE_PER_TARGET). */
  perSecond: number;
  /** Longest this delivery may still wait, ms; a slot further off is not reserved. */
  maxWaitMs: number;
  /** A slot this delivery reserved before: it stands unless the target was held since. */
  reserved?: number;
}

export type SlotAnswer =
  /** `slot` is in the pacer's own clock (keep it for `reserved`); `waitMs` is how long from now. */
  | { kind: 'slot'; slot: number; waitMs: number }
  /** No slot within maxWaitMs: the delivery expires unsent. */
  | { kind: 'too_late' };

/**
 * Hands out send slots so that every target sees at most its rate, and every (account, host) at
 * most its budget, however many workers send. In process for the embedded mode; in Redis, shared
 * by all workers, otherwise (redisPacer.ts).
 */
export interface Pacer {
  reserve(request: SlotRequest): Promise<SlotAnswer>;
  /** Nothing more goes to the target for `ms`: it answered 429 or 503 (Retry-After). */
  hold(targetUrl: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The (account, host) a budget is kept for: Zapier counts its per-user limit per host. */
export const budgetKey = (accountId: string, targetUrl: string) => `${accountId}\n${new URL(targetUrl).host}`;

/** The embedded mode's pacer: the same rules as the Redis one, kept in this process. */
export function createLocalPacer(hostBudget: number, now: () => number = Date.now): Pacer {
  const targets = new Map<string, { tat: number; holdUntil: number }>();
  const budgets = new Map<string, number>();
  let reservations = 0;

  // Entries whose times have all passed say nothing a fresh entry would not; drop them now and then.
  const sweep = (at: number) => {
    for (const [url, target] of targets) if (target.tat < at && target.holdUntil < at) targets.delete(url);
    for (const [key, tat] of budgets) if (tat < at) budgets.delete(key);
  };

  return {
    async reserve(request) {
      const at = now();
      if (++reservations % 10_000 === 0) sweep(at);
      const target = targets.get(request.targetUrl) ?? { tat: 0, holdUntil: 0 };
      if (request.reserved !== undefined && target.holdUntil <= request.reserved) {
        return { kind: 'slot', slot: request.reserved, waitMs: Math.max(0, request.reserved - at) };
      }
      const key = budgetKey(request.accountId, request.targetUrl);
      const state: PaceState = { ...EMPTY_PACE_STATE, targetTat: target.tat, holdUntil: target.holdUntil, hostTat: budgets.get(key) ?? 0 };
      const reserved = reserveSlot(at, state, paceLimits(request.perSecond, hostBudget), at + request.maxWaitMs);
      if (!reserved) return { kind: 'too_late' };
      targets.set(request.targetUrl, { tat: reserved.next.targetTat, holdUntil: reserved.next.holdUntil });
      budgets.set(key, reserved.next.hostTat);
      return { kind: 'slot', slot: reserved.slot, waitMs: reserved.slot - at };
    },
    async hold(targetUrl, ms) {
      const target = targets.get(targetUrl) ?? { tat: 0, holdUntil: 0 };
      targets.set(targetUrl, { tat: target.tat, holdUntil: Math.max(target.holdUntil, now() + ms) });
    },
    close: async () => {},
  };
}
