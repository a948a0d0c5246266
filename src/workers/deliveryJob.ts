import { reportOf, type Delivery, type DeliveryJobData, type DeliveryReport } from '../domain/delivery.js';
import type { JobHandler } from '../queue/jobQueue.js';
import type { FannedOutDelivery } from '../storage/events.js';
import { groupCommit } from '../storage/groupCommit.js';
import type { Store } from '../storage/store.js';

/**
 * The handler of the `deliveries` queue, in a worker and in the embedded process alike: a parked
 * or relayed delivery, read from the database (concurrent jobs share one statement), goes back to
 * the engine at its time. One that is no longer queued (sent by another run, expired) is
 * reported as it stands, and one whose row is gone as dropped.
 */
export function createDeliveryJobHandler(
  store: Store,
  deliver: (delivery: Delivery, dueAt: number) => Promise<DeliveryReport>,
): JobHandler<DeliveryJobData, DeliveryReport> {
  const find = groupCommit(async (ids: string[]): Promise<(FannedOutDelivery | undefined)[]> => {
    const found = new Map((await store.urgentDeliveries.find(ids)).map((delivery) => [delivery.id, delivery]));
    return ids.map((id) => found.get(id));
  });

  return async (job) => {
    const delivery = await find.submit(job.delivery_id);
    if (!delivery) return reportOf({ id: job.delivery_id, hookId: job.hook_id }, 'dropped');
    if (delivery.status !== 'queued') return reportOf(delivery, delivery.status);
    return deliver(job.room_waits ? { ...delivery, roomWaits: job.room_waits } : delivery, job.due_at);
  };
}
