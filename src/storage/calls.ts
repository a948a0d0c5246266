import type { PendingEvent } from '../domain/events.js';
import type { Database } from './database.js';
import { insertEvents } from './events.js';

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
     * Records a finished call and its events in one transaction. A conversation already
     * recorded for the account records nothing and returns undefined: a report sent twice fires once.
     */
    async record(accountId: string, call: CallRecord, events: PendingEvent[]) {
      return db.transaction(async (tx) => {
        const { rowCount } = await tx.query(
          `INSERT INTO calls (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (account_id, conversation_id) DO NOTHING`,
          [accountId, call.conversationId, call.channel, call.outcome, call.spam, call.callerName, call.callerNumber, call.summary],
        );
        if (rowCount === 0) return undefined;
        return insertEvents(tx, accountId, events);
      });
    },
  };
}
