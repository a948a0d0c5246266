import { validateEventType } from '../domain/hooks.js';
import type { Caller } from '../domain/apiKey.js';
import type { FiredEvent } from '../domain/events.js';
import type { ServiceDeps, ServiceLog } from './types.js';

/**
 * Adds the jobs of events just committed to the `events` queue, one per event, named by its type.
 * Not awaited by the request, which has its answer once the events are committed: when the
 * queue cannot take them (Redis away), they wait in the outbox, and the relay adds them later.
 */
export function enqueueFired({ events }: Pick<ServiceDeps, 'events'>, fired: FiredEvent[], log: ServiceLog) {
  if (!events || fired.length === 0) return;
  events
    .add(fired.map((event) => ({ id: event.event_id, name: event.event, data: event })))
    .catch((error: unknown) => log.warn({ err: error, events: fired.length }, 'events not queued; the relay adds them from the outbox'));
}

/** Fired events, as automation platforms read them for samples. */
export function eventServices({ store }: ServiceDeps) {
  return {
    /** The caller's account's latest events of a type, newest first: what a trigger's samples show. */
    async recent(caller: Caller, event: string, limit: number) {
      const rows = await store.events.listRecent(caller.accountId, validateEventType(event), limit);
      return { events: rows.map((row) => ({ id: row.id, event: row.event_type, data: row.data, created_at: row.created_at.toISOString() })) };
    },
  };
}
