import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { createTurnCounter } from '../domain/turns.js';
import type { LocalQueue } from '../queue/localQueue.js';
import type { QueuedDelivery } from '../storage/events.js';
import type { Store } from '../storage/store.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { deliveryJobOf, type DeliveryJob } from './jobs.js';

/** Events per fan-out statement: one commit for all of them and their deliveries. */
const EVENTS_PER_BATCH = 100;
/** The outbox is looked at this often even when no producer rang (a lost ring, a CLI's events). */
const POLL_MS = 1_000;
/** When the local queue has no room, fan-out looks again this soon. */
const FULL_RETRY_MS = 50;
/**
 * A ring's look reaches this far before the last whole look that found the outbox caught up. An
 * event's time is taken at its insert, before its commit: one committed later than this after
 * it is left to the next whole look (the poll), a second later at most.
 */
const LOOK_BACK_MARGIN_MS = 2_000;

/** How far a pass looks: at the events since the outbox was last caught up, or at all of it. */
type Look = 'recent' | 'whole';

/**
 * Fan-out: takes events from the outbox (the `events` table) in batches, each batch one
 * statement that marks them dispatched and creates their deliveries, and puts the deliveries in
 * this process's local queue, each in its turn among its account's (`take`). The web process
 * fans out the events it records in the statement that records them, and hands their deliveries
 * to `take` (src/queue/handoff.ts); what this takes from the outbox is what an older web process
 * left there, ringing (`wake`) instead. It runs every second, and when rung. It takes only what
 * the local queue has room for (`room` and `readyLimit`), so a burst stays in the outbox (or the
 * handoff), shared by every worker, rather than in one worker's memory. Deliveries this process
 * dies holding are overdue after RELAY_GRACE_MS, and the relay hands them to a worker.
 *
 * The poll looks at the whole outbox; a ring's pass only at what fired since the poll last found
 * it caught up (with LOOK_BACK_MARGIN_MS), so a ring's statement does not step over every event
 * fanned out since the last vacuum (store.events.fanOut).
 */
export function startFanOut(store: Store, deliveries: LocalQueue<DeliveryJob>, options: { readyLimit: number; log: Logger }) {
  const turnOf = createTurnCounter();
  let running: Promise<void> | undefined;
  let wanted: Look | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  /** When (performance.now()) a whole look last began that left nothing in the outbox to take. */
  let caughtUpAt: number | undefined;

  /** How many more deliveries the local queue takes now. */
  const room = () => Math.max(0, Math.min(deliveries.room(), options.readyLimit - deliveries.counts().ready));
  const full = () => room() === 0;
  /**
   * Puts deliveries in the local queue, each in its turn among its account's, as many as it holds
   * (EMBEDDED_QUEUE_CAPACITY): the rest are committed, and the relay sends them once their lease
   * ends. Only the embedded process is handed more than that (a worker pops no more than `room`).
   */
  const take = (queued: QueuedDelivery[]) => {
    const now = Date.now();
    const fits = queued.slice(0, deliveries.room());
    deliveries.add(fits.map((row) => ({ id: row.delivery_id, data: deliveryJobOf(row), priority: turnOf(row.account_id, now, now) })));
  };

  async function pass(look: Look) {
    while (!stopped) {
      if (full()) {
        retry ??= setTimeout(() => ((retry = undefined), wake('recent')), FULL_RETRY_MS);
        return;
      }
      const startedAt = performance.now();
      const lookBackMs = look === 'recent' && caughtUpAt !== undefined ? startedAt - caughtUpAt + LOOK_BACK_MARGIN_MS : undefined;
      const taken = await store.events.fanOut(EVENTS_PER_BATCH, RELAY_GRACE_MS, lookBackMs);
      take(taken.deliveries);
      if (taken.events < EVENTS_PER_BATCH) {
        if (lookBackMs === undefined) caughtUpAt = startedAt;
        return;
      }
    }
  }

  function wake(look: Look) {
    if (running) {
      wanted = wanted === 'whole' ? wanted : look;
      return;
    }
    running = pass(look)
      .catch((error: unknown) => options.log.warn({ err: error }, 'fan-out failed; the outbox keeps the events, trying again'))
      .finally(() => {
        running = undefined;
        const next = wanted;
        wanted = undefined;
        if (next && !stopped) wake(next);
      });
  }

  const poll = setInterval(() => wake('whole'), POLL_MS);
  wake('whole');
  return {
    /** New events are in the outbox: look now. */
    wake: () => wake('recent'),
    room,
    take,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(retry);
      await running;
    },
  };
}
