import type { BaseLogger } from 'pino';
import type { Config } from '../config.js';
import type { NewEventsSignal } from '../queue/newEvents.js';
import type { Store } from '../storage/store.js';
import { callServices } from './calls.js';
import { contactServices } from './contacts.js';
import { eventServices } from './events.js';
import { hookServices } from './hooks.js';
import { keyServices } from './keys.js';

/** The log lines use cases write; a pino logger, and Fastify's, fit. */
export type ServiceLog = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

/** What the use cases run on: storage, the new-events signal, the settings they read, a log. */
export interface ServiceDeps {
  store: Store;
  /** Rung when events are committed; absent in a process without one (the CLI): the server's fan-out polls. */
  newEvents: NewEventsSignal | undefined;
  config: Pick<Config, 'DEFAULT_COUNTRY' | 'MAX_HOOKS_PER_KEY' | 'SECRETS_KEY'>;
  log: ServiceLog;
}

/**
 * Every use case of the service, built once per process. The HTTP routes and the CLI are the
 * ways in; they only translate to and from these. Answers are the public shapes (snake_case,
 * ISO 8601 timestamps), the same for both.
 */
export function createServices(deps: ServiceDeps) {
  return {
    keys: keyServices(deps),
    contacts: contactServices(deps),
    hooks: hookServices(deps),
    events: eventServices(deps),
    calls: callServices(deps),
    /** Whether storage and the queue's Redis answer (readiness). */
    async readiness() {
      const checks = await Promise.allSettled([deps.store.ping(), deps.newEvents?.ping()]);
      const [storage, queue] = checks.map((check) => (check.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const)));
      return { ready: storage === 'ok' && queue === 'ok', storage: storage!, queue: queue! };
    },
  };
}

export type Services = ReturnType<typeof createServices>;
