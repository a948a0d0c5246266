import type { NewEventsSignal } from '../queue/newEvents.js';

/**
 * Tells the fan-out that committed events wait in the outbox, so it takes them now rather than
 * at its next poll. Nothing can be lost here: the events are committed already, and a process
 * without the signal (the CLI) leaves them for the server's poll.
 */
export function announceEvents(newEvents: NewEventsSignal | undefined, eventIds: string[]) {
  if (eventIds.length > 0) newEvents?.notify();
}
