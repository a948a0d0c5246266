import type { BaseLogger } from 'pino';

/** The log lines use cases write; Fastify's request logger and a pino logger both fit. */
export type ServiceLog = Pick<BaseLogger, 'info' | 'warn' | 'error'>;
import type { JobQueue } from '../queue/jobQueue.js';
import type { Store } from '../storage/store.js';
import type { EventJob } from '../workers/jobs.js';

/** What the use cases need: storage, the events queue, and the few settings they read. */
export interface ServiceDeps {
  store: Store;
  queue: JobQueue<EventJob>;
  defaultCountry: string;
  log: ServiceLog;
}
