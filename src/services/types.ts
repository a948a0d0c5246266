import type { BaseLogger } from 'pino';
import type { Config } from '../config.js';
import type { DeliveryHandoff } from '../queue/handoff.js';
import type { Store } from '../storage/store.js';

/** The log lines use cases write; a pino logger, and Fastify's, fit. */
export type ServiceLog = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

/**
 * What the use cases run on: storage, the delivery handoff, the settings they read, a log. Its
 * own file, below the use cases and index.ts, so that no service file imports the index that
 * imports it.
 */
export interface ServiceDeps {
  store: Store;
  /**
   * Takes the deliveries of events as they commit, to a worker; absent in a process that fires
   * no events (the CLI).
   */
  handoff: DeliveryHandoff | undefined;
  config: Pick<Config, 'DEFAULT_COUNTRY' | 'MAX_HOOKS_PER_KEY' | 'SECRETS_KEY' | 'PUBLIC_BASE_URL'>;
  log: ServiceLog;
}
