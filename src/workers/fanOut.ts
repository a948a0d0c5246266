import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import type { Job, JobHandler, JobQueue } from '../queue/jobQueue.js';
import type { Store } from '../storage/store.js';
import { deliveryJobOf, type DeliveryJob, type EventJob } from './jobs.js';
import { schedule, type PaceSettings } from './pace.js';
import type { Pacer } from './pacer.js';
import { untilDone } from './retry.js';

export interface FanOutDeps {
  store: Store;
  pacer: Pacer;
  deliveries: JobQueue<DeliveryJob>;
  settings: PaceSettings;
  metrics: Metrics;
  log: Logger;
}

/**
 * The `events` job: turns one event into one queued delivery per subscription (atomically, in
 * the database), reserves each delivery's slot at its target, and enqueues it to run at that
 * slot, in its turn among its account's deliveries due then. Deliveries that must wait go
 * straight to the delayed set, so a burst to one target never sits in front of other accounts'
 * work, and a burst due at once goes out by turns with other accounts' deliveries due then.
 * Every step before a claim is retried until it succeeds; what a crash or shutdown leaves, the
 * outbox relay restores.
 */
export function createFanOut({ store, pacer, deliveries, settings, metrics, log }: FanOutDeps): JobHandler<EventJob> {
  return async ({ eventId }, signal) => {
    const context = { eventId };
    const dispatched = await untilDone('fan-out', () => store.events.dispatch(eventId), signal, log, context);
    if (dispatched.length === 0) return;
    const jobs: Job<DeliveryJob>[] = [];
    await Promise.all(
      dispatched.map(async (delivery) => {
        const job = deliveryJobOf(delivery);
        const decision = await untilDone('pacing', () => schedule(pacer, job, settings), signal, log, { ...context, deliveryId: job.deliveryId });
        if (decision.kind === 'expired') {
          await untilDone('expiry', () => store.deliveries.expire(job.deliveryId), signal, log, context);
          metrics.deliveries.inc({ outcome: 'expired' });
          return;
        }
        jobs.push({ id: job.deliveryId, data: decision.job, runAt: decision.runAt, priority: decision.turn });
      }),
    );
    await untilDone('enqueue', () => deliveries.add(jobs), signal, log, context);
  };
}
