import type { Logger } from 'pino';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import type { Store } from '../storage/store.js';

/** How often the leases of the deliveries held are looked at. */
const CHECK_EVERY_MS = 1_000;
/**
 * A lease this old is renewed: checked every CHECK_EVERY_MS, a delivery's relay time is moved on
 * at most 3 s after it was last set, a good 2 s before the relay would take it.
 */
const RENEW_AFTER_MS = RELAY_GRACE_MS - 3 * CHECK_EVERY_MS;
/** Deliveries per renewal statement: each locks its rows, so a large line is not locked at once. */
const PER_STATEMENT = 500;

/**
 * The leases of the queued deliveries this process holds. A delivery is the process's that
 * fanned it out, took its parked job or its relayed copy, until its relay time (RELAY_GRACE_MS
 * after that moment, or after the time it was parked until); the relay takes it as lost past
 * that. A delivery may stay held far longer, alive: waiting in the line for its time again and
 * again while its target's departures run behind their places (a target that never answers
 * pays a handshake's allowance on every POST), waiting for in-flight room at a slow target, or
 * retrying its gate. So its relay time is moved on while it is held, and only a dead process's
 * deliveries (or those of jobs Redis lost) are ever overdue.
 */
export function createLeases(store: Store, log: Logger) {
  /** Each delivery held: when (epoch ms) its lease was last set, and the outcome it is held until. */
  const held = new Map<string, { leasedAt: number; outcome: Promise<unknown> }>();

  async function renew() {
    const now = Date.now();
    const due = [...held].filter(([, lease]) => now - lease.leasedAt >= RENEW_AFTER_MS).map(([id]) => id);
    for (let i = 0; i < due.length; i += PER_STATEMENT) {
      const ids = due.slice(i, i + PER_STATEMENT);
      await store.deliveries.extendLeases(ids, RELAY_GRACE_MS);
      // From before the statement: its clock_timestamp() is no sooner than that.
      for (const id of ids) {
        const lease = held.get(id);
        if (lease) lease.leasedAt = now;
      }
    }
  }

  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= renew()
      .catch((error: unknown) => log.warn({ err: error }, 'could not renew the leases of the deliveries held; trying again'))
      .finally(() => (running = undefined));
  }, CHECK_EVERY_MS);

  return {
    /**
     * Holds delivery `id`'s lease, set at `leasedAt`, until `outcome` settles (sent, parked,
     * expired, dropped, or left to the relay at shutdown). A copy of one held already shares its
     * outcome, and changes nothing.
     */
    hold(id: string, leasedAt: number, outcome: Promise<unknown>) {
      if (held.get(id)?.outcome === outcome) return;
      held.set(id, { leasedAt, outcome });
      // Only this hold's own end: the delivery may be held again, in a new entry, by then.
      const release = () => {
        if (held.get(id)?.outcome === outcome) held.delete(id);
      };
      outcome.then(release, release);
    },
    /** Renews no more: what is still held is the relay's once its lease runs out. */
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
