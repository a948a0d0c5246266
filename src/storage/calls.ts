import { randomUUID } from 'node:crypto';
import type { PendingEvent } from '../domain/events.js';
import type { Database } from './database.js';
import { fannedOutRows, fanOutOf, queuedDeliveriesOf, type FannedOutRow, type QueuedDelivery } from './events.js';

export interface CallRecord {
  conversationId: string;
  channel: string;
  outcome: string;
  spam: boolean;
  callerName: string;
  callerNumber: string;
  summary: string;
}

/** One finished call to record, with the events it fires. */
export interface CallToRecord {
  accountId: string;
  call: CallRecord;
  events: PendingEvent[];
}

export function callQueries(db: Database) {
  return {
    /**
     * Records finished calls and their events, and fans the events out (events.ts, `fanOutOf`),
     * in one statement: so atomically, in one round trip and one commit, however many calls. The
     * events are dispatched already; their deliveries are the caller's to hand to a worker
     * within `leaseMs`, after which the relay takes them. Returns each call's event ids, and the
     * deliveries. A conversation already recorded for its account records nothing and gets
     * none: a report sent twice fires once, and of two reports of one conversation in the same
     * batch, the first.
     */
    async record(calls: CallToRecord[], leaseMs: number): Promise<{ fired: string[][]; deliveries: QueuedDelivery[] }> {
      const events = calls.flatMap(({ events: fired }, n) => fired.map((event) => ({ n: n + 1, id: randomUUID(), ...event })));
      const column = <T>(read: (entry: CallToRecord) => T) => calls.map(read);
      const { rows } = await db.query<FannedOutRow>(
        `WITH input AS (
           SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[])
             WITH ORDINALITY AS c (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary, n)),
         first AS (SELECT DISTINCT ON (account_id, conversation_id) * FROM input ORDER BY account_id, conversation_id, n),
         recorded AS (
           INSERT INTO calls (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary)
           SELECT account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary FROM first
           ON CONFLICT (account_id, conversation_id) DO NOTHING
           RETURNING account_id, conversation_id),
         fired AS (
           INSERT INTO events (id, account_id, event_type, data, dispatched_at)
           SELECT pending.id, first.account_id, pending.type, pending.data, clock_timestamp()
           FROM unnest($9::int[], $10::uuid[], $11::text[], $12::json[]) AS pending (n, id, type, data)
           JOIN first ON first.n = pending.n
           JOIN recorded ON recorded.account_id = first.account_id AND recorded.conversation_id = first.conversation_id
           RETURNING id, account_id, event_type, created_at, hook_id),
         ${fanOutOf('fired', '$13')}
         ${fannedOutRows('fired')}`,
        [
          column((entry) => entry.accountId),
          column((entry) => entry.call.conversationId),
          column((entry) => entry.call.channel),
          column((entry) => entry.call.outcome),
          column((entry) => entry.call.spam),
          column((entry) => entry.call.callerName),
          column((entry) => entry.call.callerNumber),
          column((entry) => entry.call.summary),
          events.map((event) => event.n),
          events.map((event) => event.id),
          events.map((event) => event.type),
          events.map((event) => JSON.stringify(event.data)),
          leaseMs,
        ],
      );
      const fired = calls.map((): string[] => []);
      const recordedIds = new Set(rows.map((row) => row.event_id));
      for (const event of events) if (recordedIds.has(event.id)) fired[event.n - 1]!.push(event.id);
      return { fired, deliveries: queuedDeliveriesOf(rows) };
    },
  };
}
