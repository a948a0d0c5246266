import type { FastifyBaseLogger } from 'fastify';
import type { EventQueue } from '../queue/eventQueue.js';

/**
 * Hands committed events to the queue right away. A failure here loses nothing: the events are
 * in the outbox and the relay enqueues them once the queue is back.
 */
export async function publishEvents(queue: EventQueue, eventIds: string[], log: FastifyBaseLogger) {
  if (eventIds.length === 0) return;
  try {
    await queue.enqueue(eventIds);
  } catch (error) {
    log.warn({ err: error, events: eventIds.length }, 'queue unavailable; events stay in the outbox for the relay');
  }
}
