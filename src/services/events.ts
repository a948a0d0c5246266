import { validateEventType } from '../domain/hooks.js';
import type { Caller } from '../domain/apiKey.js';
import type { FiredEvent } from '../domain/events.js';
import { createTurnCounter } from '../domain/turns.js';
import type { ServiceDeps } from './types.js';

/**
 * The one way committed events are enqueued: each event's job added to the `events` queue, named
 * by its type, at its account's turn among the account's events of the same second, so that one
 * account's burst does not hold another account's events behind it. Not awaited by the request,
 * which has its answer once the events are committed: when the queue cannot take them (Redis
 * away), they wait in the outbox, and the relay adds them later.
 */
export function eventEnqueuer({ events, log }: Pick<ServiceDeps, 'events' | 'log'>) {
  const turnOf = createTurnCounter();
  return (fired: FiredEvent[]) => {
    if (!events || fired.length === 0) return;
    const now = Date.now();
    events
      .add(fired.map((event) => ({ id: event.event_id, name: event.event, data: event, priority: turnOf(event.account_id, now, now) })))
      .catch((error: unknown) => log.warn({ err: error, events: fired.length }, 'events not queued; the relay adds them from the outbox'));
  };
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
