import type { FastifyBaseLogger } from 'fastify';
import type { EventJobHandler, EventQueue } from './eventQueue.js';

/**
 * The queue of the single-process embedded mode: bounded, in memory, running the same job
 * handler as the BullMQ workers. When full it refuses, and the events wait in the outbox.
 */
export function createEmbeddedQueue(
  handler: EventJobHandler,
  options: { capacity: number; concurrency: number; log: FastifyBaseLogger },
): EventQueue {
  const waiting: string[] = [];
  const known = new Set<string>(); // waiting or running, like a BullMQ job id
  const running = new Set<Promise<void>>();
  let closed = false;

  const pump = () => {
    while (!closed && running.size < options.concurrency && waiting.length > 0) {
      const eventId = waiting.shift()!;
      const job: Promise<void> = handler(eventId)
        .catch((error) => options.log.error({ err: error, eventId }, 'event job failed'))
        .finally(() => {
          running.delete(job);
          known.delete(eventId);
          pump();
        });
      running.add(job);
    }
  };

  return {
    async enqueue(eventIds) {
      const fresh = eventIds.filter((id) => !known.has(id));
      if (closed || known.size + fresh.length > options.capacity) throw new Error('embedded queue is full or closed');
      for (const id of fresh) {
        known.add(id);
        waiting.push(id);
      }
      pump();
    },
    depth: async () => known.size,
    ping: async () => {},
    async close() {
      closed = true;
      await Promise.all(running);
    },
  };
}
