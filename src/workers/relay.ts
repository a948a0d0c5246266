import type { Logger } from 'pino';
import { RELAY_GRACE_MS, type DeliveryJobData } from '../domain/delivery.js';
import type { FiredEvent } from '../domain/events.js';
import type { Metrics } from '../observability/metrics.js';
import type { JobQueue } from '../queue/jobQueue.js';
import type { Store } from '../storage/store.js';

/** How often the database is looked at for work nobody did in time. */
const RELAY_INTERVAL_MS = 1_000;
/**
 * A pass still running after this long is left to finish on its own, and the next one starts. A
 * worker's Redis commands wait for Redis as long as it takes, and one that never settles must
 * not stop the relay, which is what recovers the jobs Redis lost. Two passes never take the same
 * row: each takes what it relays under a lease.
 */
const PASS_GIVE_UP_MS = 5_000;
/** Events or deliveries per statement; a pass takes page after page while pages come full. */
const PAGE_SIZE = 500;
/**
 * Deliveries are looked for among those queued since DELIVERY_MAX_WAIT ago and this much more,
 * so a difference between this process's clock and the database's never hides one.
 */
const CLOCK_SLACK_MS = 10 * 60_000;

/**
 * The relay tops a queue up to this many waiting jobs, and adds nothing to one that has as many:
 * what it takes is leased for RELAY_GRACE_MS only, and a backlog it added all at once would
 * outlast its lease and be taken, and added, again and again.
 */
const TOP_UP_TO = 5_000;

/** The queues the relay adds to; a queue with `room` (the embedded one) is given no more than that. */
export interface RelayQueues {
  events: JobQueue<FiredEvent> & { room?(): number };
  deliveries: JobQueue<DeliveryJobData> & { room?(): number };
}

/** How many jobs `queue` should be given now: its own room, or what tops it up to TOP_UP_TO waiting. */
const roomIn = async (queue: RelayQueues[keyof RelayQueues]) => Math.min(queue.room?.() ?? TOP_UP_TO, Math.max(0, TOP_UP_TO - (await queue.counts()).waiting));

/**
 * The database is the record; the queues only carry work. This adds again, once a second, what
 * the queues lost or never got: events still in the outbox past their relay time (their job was
 * never added, Redis away, or Redis lost it; a kept failed job runs again), and queued deliveries
 * past theirs (the process that fanned them out or parked them died, or Redis lost the parked
 * job). Each is taken for RELAY_GRACE_MS, so no other relay takes it meanwhile. Adding work twice
 * is safe: a fan-out happens once, and a delivery's claim allows it one POST. A queue already
 * holding TOP_UP_TO waiting jobs gets none until it drains. Only deliveries that may still be
 * sent (DELIVERY_MAX_WAIT) are looked for; maintenance expires older ones.
 */
export function startRelay(store: Store, queues: RelayQueues, log: Logger, maxWaitMs: number, metrics: Pick<Metrics, 'relayed'>) {
  const pageOf = async (queue: RelayQueues[keyof RelayQueues]) => Math.min(PAGE_SIZE, await roomIn(queue));

  async function relayEvents() {
    let relayed = 0;
    for (let page = await pageOf(queues.events); page > 0; page = await pageOf(queues.events)) {
      const events = await store.events.takeOverdue(page, RELAY_GRACE_MS);
      await queues.events.add(
        events.map((event) => ({ id: event.event_id, name: event.event, data: event })),
        { again: true },
      );
      relayed += events.length;
      metrics.relayed.inc({ queue: 'events' }, events.length);
      if (events.length < page) break;
    }
    return relayed;
  }

  async function relayDeliveries() {
    let relayed = 0;
    for (let page = await pageOf(queues.deliveries); page > 0; page = await pageOf(queues.deliveries)) {
      const now = Date.now();
      const deliveries = await store.deliveries.takeOverdue(page, RELAY_GRACE_MS, now - maxWaitMs - CLOCK_SLACK_MS);
      await queues.deliveries.add(
        deliveries.map((delivery) => ({
          id: `${delivery.id}.relayed.${now}`,
          name: 'relayed',
          data: { delivery_id: delivery.id, event_id: delivery.eventId, hook_id: delivery.hookId, account_id: delivery.accountId, due_at: now },
        })),
      );
      relayed += deliveries.length;
      metrics.relayed.inc({ queue: 'deliveries' }, deliveries.length);
      if (deliveries.length < page) break;
    }
    return relayed;
  }

  async function pass() {
    const events = await relayEvents();
    const deliveries = await relayDeliveries();
    if (events + deliveries > 0) log.info({ events, deliveries }, 'relayed overdue work from the database to the queues');
  }

  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    const started = pass().catch((error: unknown) => log.warn({ err: error }, 'relay pass failed; trying again'));
    running = started;
    const giveUp = setTimeout(() => {
      if (running !== started) return;
      log.warn({ afterMs: PASS_GIVE_UP_MS }, 'relay pass still running; starting the next one beside it');
      running = undefined;
    }, PASS_GIVE_UP_MS);
    void started.finally(() => {
      clearTimeout(giveUp);
      if (running === started) running = undefined;
    });
  }, RELAY_INTERVAL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
