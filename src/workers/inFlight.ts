import type { Delivery } from '../domain/delivery.js';
import type { Admission } from './line.js';
import { hostOf } from './targetHosts.js';

const LEVELS = ['target', 'account', 'host'] as const;

/**
 * Caps how many POSTs one target URL, one account and one target host may have in flight in
 * this process, so that hanging or slow targets hold only part of the delivery capacity: one
 * bad URL cannot take its account's share, and one account (or host) cannot take everyone's.
 * A delivery over a cap waits in the line (line.ts), holding nothing, in line by its turn: when room
 * comes back under that cap, the best-placed delivery waiting for it goes first.
 */
export function createInFlightLimits(
  limits: { perTarget: number; perAccount: number; perHost: number },
  needsRoom: (delivery: Delivery) => boolean,
): Admission<Delivery> {
  const limitOf = { target: limits.perTarget, account: limits.perAccount, host: limits.perHost };
  const counts = new Map<string, number>();
  const keysOf = (delivery: Delivery) => [`target ${delivery.targetUrl}`, `account ${delivery.accountId}`, `host ${hostOf(delivery.targetUrl)}`];
  return {
    needsRoom,
    keysOf,
    take(delivery) {
      const keys = keysOf(delivery);
      const full = keys.findIndex((key, i) => (counts.get(key) ?? 0) >= limitOf[LEVELS[i]!]);
      if (full >= 0) return { waitFor: keys[full]! };
      for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
      return {
        release() {
          for (const key of keys) {
            const left = counts.get(key)! - 1;
            if (left === 0) counts.delete(key);
            else counts.set(key, left);
          }
        },
      };
    },
  };
}

/**
 * The caps for a process sending `concurrency` POSTs at once: a target URL an eighth, an account
 * half, a host three quarters. An account's three bad URLs then still leave it room for its good
 * ones, and one account's (or host's) bad targets leave the others at least a quarter.
 */
export const defaultInFlightLimits = (concurrency: number) => ({
  perTarget: Math.max(1, Math.floor(concurrency / 8)),
  perAccount: Math.max(1, Math.floor(concurrency / 2)),
  perHost: Math.max(1, Math.floor((concurrency * 3) / 4)),
});
