import { BEFORE_ANY_ID, encodeFeedCursor, eventFeedQuery, laterPosition, type EventFeedInput, type FeedPosition } from '../domain/eventFeed.js';
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

/** The events feed: fired events as automation platforms and polling clients read them. */
export function eventServices({ store, config }: ServiceDeps) {
  return {
    /**
     * The caller's account's events of a type after a cursor, oldest first; or without one the
     * newest, newest first (a trigger's samples). Either way `next_cursor` is where to poll from.
     */
    async feed(caller: Caller, input: EventFeedInput) {
      const query = eventFeedQuery(input, new Date(), config.RETENTION_DAYS);
      const { events, horizon } = await store.events.feed(caller.accountId, query.event, query.after, query.limit);
      const last = events.at(-1);
      // A full page ends at its last event; anything less reached the horizon, which is then the place to poll from.
      const end: FeedPosition =
        query.after && last && events.length === query.limit
          ? { tx: last.tx, id: last.id, at: last.created_at }
          : { tx: horizon.tx, id: BEFORE_ANY_ID, at: horizon.at };
      return {
        events: events.map((row) => ({ id: row.id, event: row.event_type, data: row.data, created_at: row.created_at.toISOString() })),
        next_cursor: encodeFeedCursor(query.after ? laterPosition(query.after, end) : end),
      };
    },
  };
}
