/**
 * Caps how many POSTs one target URL, one account and one target host may have in flight in
 * this process, so that hanging or slow targets hold only part of the delivery capacity: one
 * bad URL cannot take its account's share, and one account (or host) cannot take everyone's.
 * A delivery over a cap steps aside (it is deferred, holding no worker) instead of waiting in a
 * worker slot.
 */
export function createInFlightLimits(limits: { perTarget: number; perAccount: number; perHost: number }) {
  const levels = [
    { limit: limits.perTarget, counts: new Map<string, number>() },
    { limit: limits.perAccount, counts: new Map<string, number>() },
    { limit: limits.perHost, counts: new Map<string, number>() },
  ];
  return {
    /** A release function when all three have room, otherwise undefined. */
    tryAcquire(targetUrl: string, accountId: string, host: string): (() => void) | undefined {
      const keys = [targetUrl, accountId, host];
      if (levels.some((level, i) => (level.counts.get(keys[i]!) ?? 0) >= level.limit)) return undefined;
      levels.forEach((level, i) => level.counts.set(keys[i]!, (level.counts.get(keys[i]!) ?? 0) + 1));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        levels.forEach((level, i) => {
          const left = level.counts.get(keys[i]!)! - 1;
          if (left === 0) level.counts.delete(keys[i]!);
          else level.counts.set(keys[i]!, left);
        });
      };
    },
  };
}

export type InFlightLimits = ReturnType<typeof createInFlightLimits>;

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
