import { randomUUID } from 'node:crypto';
import type { PendingEvent } from '../domain/events.js';
import type { Database } from './database.js';

export interface CallRecord {
  conversationId: string;
  channel: string;
  outcome: string;
  spam: boolean;
  callerName: string;
  callerNumber: string;
  summary: string;
}

export function callQueries(db: Database) {
  return {
    /**
     * Records a finished call and its events in one statement (so atomically, in one round trip)
     * and returns the event ids. A conversation already recorded for the account records nothing
     * and returns none: a report sent twice fires once.
     */
    async record(accountId: string, call: CallRecord, events: PendingEvent[]): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(
        `WITH call AS (
           INSERT INTO calls (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (account_id, conversation_id) DO NOTHING
           RETURNING account_id)
         INSERT INTO events (id, account_id, event_type, data)
         SELECT fired.id, call.account_id, fired.type, fired.data
         FROM call, unnest($9::uuid[], $10::text[], $11::json[]) AS fired (id, type, data)
         RETURNING id`,
        [
          accountId,
          call.conversationId,
          call.channel,
          call.outcome,
          call.spam,
          call.callerName,
          call.callerNumber,
          call.summary,
          events.map(() => randomUUID()),
          events.map((event) => event.type),
          events.map((event) => JSON.stringify(event.data)),
        ],
      );
      return rows.map((row) => row.id);
    },
  };
}
