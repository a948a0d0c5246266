import type { Logger } from 'pino';
import { createTurnCounter } from '../domain/pacing.js';
import type { LocalQueue } from '../queue/localQueue.js';
import type { Store } from '../storage/store.js';
import { RELAY_GRACE_MS } from './deliver.js';
import { deliveryJobOf, type DeliveryJob } from './jobs.js';

/** Events per fan-out statement: one commit for all of them and their deliveries. */
const EVENTS_PER_BATCH = 100;
/** The outbox is looked at this often even when no producer rang (a lost ring, a CLI's events). */
const POLL_MS = 1_000;
/** When the local queue has no room, fan-out looks again this soon. */
const FULL_RETRY_MS = 50;

/**
 * Fan-out: takes events from the outbox (the `events` table) in batches, each batch one
 * statement that marks them dispatched and creates their deliveries, and puts the deliveries in
 * this process's local queue, each in its turn among its account's. It runs when a producer
 * rings (`wake`), and every second. It takes only what the local queue has room for (`room` and
 * `readyLimit`), so a burst stays in the outbox, shared by every worker, rather than in one
 * worker's memory. Deliveries this process dies holding are overdue after RELAY_GRACE_MS, and
 * the relay hands them to a worker.
 */
export function startFanOut(store: Store, deliveries: LocalQueue<DeliveryJob>, options: { readyLimit: number; log: Logger }) {
  const turnOf = createTurnCounter();
  let running: Promise<void> | undefined;
  let wanted = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const full = () => deliveries.room() === 0 || deliveries.counts().ready >= options.readyLimit;

  async function pass() {
    while (!stopped) {
      if (full()) {
        retry ??= setTimeout(() => ((retry = undefined), wake()), FULL_RETRY_MS);
        return;
      }
      const taken = await store.events.fanOut(EVENTS_PER_BATCH, RELAY_GRACE_MS);
      const now = Date.now();
      deliveries.add(taken.deliveries.map((row) => ({ id: row.delivery_id, data: deliveryJobOf(row), priority: turnOf(row.account_id, now, now) })));
      if (taken.events < EVENTS_PER_BATCH) return;
    }
  }

  function wake() {
    if (running) {
      wanted = true;
      return;
    }
    running = pass()
      .catch((error: unknown) => options.log.warn({ err: error }, 'fan-out failed; the outbox keeps the events, trying again'))
      .finally(() => {
        running = undefined;
        if (wanted && !stopped) {
          wanted = false;
          wake();
        }
      });
  }

  const poll = setInterval(wake, POLL_MS);
  wake();
  return {
    /** New events are in the outbox: look now. */
    wake,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(retry);
      await running;
    },
  };
}
