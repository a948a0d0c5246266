/**
 * Caps how many POSTs one account, and one target host, may have in flight in this process, so
 * that one account's hanging or slow targets can hold only part of the delivery capacity and
 * the other accounts keep theirs. A delivery over a cap steps aside (it is deferred, holding no
 * worker) instead of waiting in a worker slot.
 */
export function createInFlightLimits(limits: { perAccount: number; perHost: number }) {
  const accounts = new Map<string, number>();
  const hosts = new Map<string, number>();
  const take = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const give = (counts: Map<string, number>, key: string) => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left === 0) counts.delete(key);
    else counts.set(key, left);
  };
  return {
    /** A release function when both have room, otherwise undefined. */
    tryAcquire(accountId: string, host: string): (() => void) | undefined {
      if ((accounts.get(accountId) ?? 0) >= limits.perAccount || (hosts.get(host) ?? 0) >= limits.perHost) return undefined;
      take(accounts, accountId);
      take(hosts, host);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        give(accounts, accountId);
        give(hosts, host);
      };
    },
  };
}

export type InFlightLimits = ReturnType<typeof createInFlightLimits>;
