import type { FastifyBaseLogger } from 'fastify';
import type { EventQueue } from '../queue/eventQueue.js';
import type { Store } from '../storage/store.js';

/** What the use cases need: storage, the event queue, and the few settings they read. */
export interface ServiceDeps {
  store: Store;
  queue: EventQueue;
  defaultCountry: string;
  log: FastifyBaseLogger;
}
