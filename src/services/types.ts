import type { BaseLogger } from 'pino';
import type { Config } from '../config.js';
import type { FiredEvent } from '../domain/events.js';
import type { JobQueue } from '../queue/jobQueue.js';
import type { Store } from '../storage/store.js';

/** The log lines use cases write; a pino logger, and Fastify's, fit. */
export type ServiceLog = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

/**
 * What the use cases run on: storage, the `events` queue, the settings they read, a log. Its
 * own file, below the use cases and index.ts, so that no service file imports the index that
 * imports it.
 */
export interface ServiceDeps {
  store: Store;
  /** Where fired events' jobs are added once committed; absent in a process that fires no events (the CLI). */
  events: JobQueue<FiredEvent> | undefined;
  config: Pick<Config, 'DEFAULT_COUNTRY' | 'MAX_HOOKS_PER_KEY' | 'SECRETS_KEY' | 'PUBLIC_BASE_URL' | 'RETENTION_DAYS'>;
  log: ServiceLog;
}

/** Adds committed events' jobs (events.ts, `eventEnqueuer`). */
export type EnqueueFired = (fired: FiredEvent[]) => void;

/** What a use case is built with: the process's dependencies, and the one enqueuer of events. */
export type UseCaseDeps = ServiceDeps & { enqueue: EnqueueFired };
