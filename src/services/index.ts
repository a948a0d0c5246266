import { callServices } from './calls.js';
import { contactServices } from './contacts.js';
import { eventEnqueuer, eventServices } from './events.js';
import { hookServices } from './hooks.js';
import { keyServices } from './keys.js';
import { portalServices } from './portal.js';
import type { ServiceDeps } from './types.js';

/**
 * Every use case of the service, built once per process. The HTTP routes and the CLI are the
 * ways in; they only translate to and from these. Answers are the public shapes (snake_case,
 * ISO 8601 timestamps), the same for both.
 */
export function createServices(given: ServiceDeps) {
  const deps = { ...given, enqueue: eventEnqueuer(given) };
  const keys = keyServices(deps);
  const hooks = hookServices(deps);
  return {
    keys,
    contacts: contactServices(deps),
    hooks,
    events: eventServices(deps),
    calls: callServices(deps),
    portal: portalServices(deps, { keys, hooks }),
    /** Whether storage and the queue's Redis answer (readiness). */
    async readiness() {
      const checks = await Promise.allSettled([deps.store.ping(), deps.events?.ping()]);
      const [storage, queue] = checks.map((check) => (check.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const)));
      return { ready: storage === 'ok' && queue === 'ok', storage: storage!, queue: queue! };
    },
  };
}

export type Services = ReturnType<typeof createServices>;
