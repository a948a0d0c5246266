import { RELAY_GRACE_MS, reportOf, type Delivery, type DeliveryReport } from '../domain/delivery.js';
import type { FiredEvent } from '../domain/events.js';
import type { JobHandler, RunningJob } from '../queue/jobQueue.js';
import type { FannedOutDelivery } from '../storage/events.js';
import { groupCommit } from '../storage/groupCommit.js';
import type { Store } from '../storage/store.js';

/** A job of the `events` queue, done: what became of each of its event's deliveries. */
export interface EventJobResult {
  event_id: string;
  event: FiredEvent['event'];
  account_id: string;
  deliveries: DeliveryReport[];
}

/** Progress is shown at most this often while a job's deliveries settle. */
const PROGRESS_EVERY_MS = 500;

/**
 * Awaits every report, telling the job's progress as they come: `{ deliveries, settled }`, at the
 * start, every PROGRESS_EVERY_MS, and at the end. A job with one delivery reports none; its
 * return value says it all.
 */
async function settleAll(reports: (DeliveryReport | Promise<DeliveryReport>)[], job: RunningJob): Promise<DeliveryReport[]> {
  if (reports.length <= 1) return Promise.all(reports);
  let settled = 0;
  let toldAt = Date.now();
  job.reportProgress({ deliveries: reports.length, settled });
  const all = await Promise.all(
    reports.map(async (report) => {
      const done = await report;
      settled++;
      if (Date.now() - toldAt >= PROGRESS_EVERY_MS) {
        toldAt = Date.now();
        job.reportProgress({ deliveries: reports.length, settled });
      }
      return done;
    }),
  );
  job.reportProgress({ deliveries: reports.length, settled });
  return all;
}

/**
 * The handler of the `events` queue, in a worker and in the embedded process alike: fans the
 * event out (concurrent jobs share one statement and commit), hands each delivery to the engine,
 * and completes once each has an outcome or is parked, listing them. It fails only when the
 * fan-out could not be written; the event then stays in the outbox, and the relay adds its job
 * again. Run twice (a stalled job), it fans out once and the claims keep each POST to one.
 */
export function createEventJobHandler(store: Store, deliver: (delivery: Delivery) => Promise<DeliveryReport>): JobHandler<FiredEvent, EventJobResult> {
  const fanOut = groupCommit(async (events: FiredEvent[]): Promise<FannedOutDelivery[][]> => {
    const byEvent = new Map<string, FannedOutDelivery[]>(events.map((event) => [event.event_id, []]));
    for (const delivery of await store.events.fanOut(events, RELAY_GRACE_MS)) byEvent.get(delivery.eventId)?.push(delivery);
    return events.map((event) => byEvent.get(event.event_id)!);
  });

  return async (event, job) => {
    const deliveries = await fanOut.submit(event);
    const reports = deliveries.map((delivery) => (delivery.status === 'queued' ? deliver(delivery) : reportOf(delivery, delivery.status)));
    return { event_id: event.event_id, event: event.event, account_id: event.account_id, deliveries: await settleAll(reports, job) };
  };
}
