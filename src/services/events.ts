import { validateEventType } from '../domain/hooks.js';
import type { Caller } from '../domain/apiKey.js';
import type { ServiceDeps } from './types.js';

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
