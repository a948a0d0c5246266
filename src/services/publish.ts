import type { JobQueue } from '../queue/jobQueue.js';
import type { EventJob } from '../workers/jobs.js';
import type { ServiceLog } from './deps.js';

/**
 * Hands committed events to the queue right away. A failure here loses nothing: the events are
 * in the outbox and the relay enqueues them once the queue is back.
 */
export async function publishEvents(queue: JobQueue<EventJob>, eventIds: string[], log: ServiceLog) {
  if (eventIds.length === 0) return;
  try {
    await queue.add(eventIds.map((eventId) => ({ id: eventId, data: { eventId } })));
  } catch (error) {
    log.warn({ err: error, events: eventIds.length }, 'queue unavailable; events stay in the outbox for the relay');
  }
}
