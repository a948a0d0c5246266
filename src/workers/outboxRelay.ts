import type { FastifyBaseLogger } from 'fastify';
import type { EventQueue } from '../queue/eventQueue.js';
import type { Store } from '../storage/store.js';

export interface RelayOptions {
  intervalMs?: number;
  /** Events younger than this were just handed to the queue by their producer; leave them be. */
  graceMs?: number;
  batch?: number;
}

/**
 * Enqueues events that were committed but never taken off a queue: Redis was away when they
 * fired, or the producer died between commit and enqueue. Enqueueing one twice is harmless:
 * the job id dedupes while the job is kept, and the delivery claims dedupe after that.
 */
export function startOutboxRelay(store: Store, queue: EventQueue, log: FastifyBaseLogger, options: RelayOptions = {}) {
  const { intervalMs = 1_000, graceMs = 5_000, batch = 500 } = options;
  let running: Promise<void> | undefined;
  const tick = async () => {
    try {
      const ids = await store.events.listUndispatched(graceMs, batch);
      if (ids.length > 0) {
        await queue.enqueue(ids);
        log.info({ events: ids.length }, 'relayed events from the outbox');
      }
    } catch (error) {
      log.warn({ err: error }, 'outbox relay pass failed; trying again');
    }
  };
  const timer = setInterval(() => {
    running ??= tick().finally(() => (running = undefined));
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
