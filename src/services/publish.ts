import type { JobQueue } from '../queue/jobQueue.js';
import type { EventJob } from '../workers/jobs.js';
import type { ServiceLog } from './index.js';

/**
 * Hands committed events to the queue right away. A failure here loses nothing: the events are
 * in the outbox and the relay enqueues them once the queue is back (or, in a process without a
 * queue, from a worker or the embedded process).
 */
export async function publishEvents(queue: JobQueue<EventJob> | undefined, eventIds: string[], log: ServiceLog) {
  if (eventIds.length === 0 || !queue) return;
  try {
    await queue.add(eventIds.map((eventId) => ({ id: eventId, data: { eventId } })));
  } catch (error) {
    log.warn({ err: error, events: eventIds.length }, 'queue unavailable; events stay in the outbox for the relay');
  }
}
