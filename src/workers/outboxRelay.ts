import type { Logger } from 'pino';
import type { LocalQueue } from '../queue/localQueue.js';
import type { Store } from '../storage/store.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { deliveryJobOf, type DeliveryJob } from './jobs.js';

/** How often overdue deliveries are looked for. */
const RELAY_INTERVAL_MS = 1_000;
/** Deliveries per statement; a pass takes page after page while the local queue has room. */
const PAGE_SIZE = 500;
/**
 * The relay reads the days since DELIVERY_MAX_WAIT ago and this much more, so a difference
 * between this process's clock and the database's never hides one it should still hand back.
 */
const CLOCK_SLACK_MS = 10 * 60_000;

/**
 * The database is the outbox; this hands back to a worker every queued delivery that is overdue
 * (its `relay_at` passed): the process that fanned it out or parked it died, was stopped, or
 * lost its wake with Redis. Each is taken for RELAY_GRACE_MS (no other relay takes it meanwhile)
 * and put in this process's local queue, ahead of the line (it is the oldest work). Handing one
 * over twice is safe: the claim allows one POST per delivery. Only deliveries that may still be
 * sent (DELIVERY_MAX_WAIT) are looked for, so only their days are read; maintenance expires the
 * older ones. Events not yet fanned out need no relay: fan-out polls the outbox itself.
 */
export function startOutboxRelay(store: Store, deliveries: LocalQueue<DeliveryJob>, log: Logger, maxWaitMs: number) {
  async function pass() {
    let restored = 0;
    for (let room = deliveries.room(); room > 0; room = deliveries.room()) {
      const rows = await store.deliveries.takeOverdue(Math.min(room, PAGE_SIZE), RELAY_GRACE_MS, Date.now() - maxWaitMs - CLOCK_SLACK_MS);
      restored += deliveries.add(rows.map((row) => ({ id: row.delivery_id, data: deliveryJobOf(row), priority: 0 })));
      if (rows.length < PAGE_SIZE) break;
    }
    if (restored > 0) log.info({ restored }, 'relayed overdue deliveries from the outbox');
  }

  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= pass()
      .catch((error: unknown) => log.warn({ err: error }, 'outbox relay failed; trying again'))
      .finally(() => (running = undefined));
  }, RELAY_INTERVAL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
