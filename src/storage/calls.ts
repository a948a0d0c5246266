import { randomUUID } from 'node:crypto';
import type { PendingEvent } from '../domain/events.js';
import type { Database } from './database.js';
import type { FiredEvent } from '../domain/events.js';
import { firedEventOf, recordEvents } from './events.js';

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
     * Records finished calls and their events (events.ts, `recordEvents`) in one statement: so
     * atomically, in one round trip and one commit, however many calls. Returns, for each call,
     * whether it was recorded now, and its events that fan out, for their jobs. A conversation
     * already recorded for its account records nothing and fires none: a report sent twice fires
     * once, and of two reports of one conversation in the same batch, the first.
     */
    async record(calls: CallToRecord[], relayGraceMs: number): Promise<{ recorded: boolean; fansOut: FiredEvent[] }[]> {
      const events = calls.flatMap(({ events: fired }, n) => fired.map((event) => ({ n: n + 1, id: randomUUID(), ...event })));
      const column = <T>(read: (entry: CallToRecord) => T) => calls.map(read);
      const { rows } = await db.query<{ id: string; account_id: string; event_type: FiredEvent['event']; fired_at: string; fans_out: boolean }>(
        `WITH input AS (
           SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[])
             WITH ORDINALITY AS c (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary, n)),
         first AS (SELECT DISTINCT ON (account_id, conversation_id) * FROM input ORDER BY account_id, conversation_id, n),
         recorded AS (
           INSERT INTO calls (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary)
           SELECT account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary FROM first
           ON CONFLICT (account_id, conversation_id) DO NOTHING
           RETURNING account_id, conversation_id),
         pending AS (
           SELECT pending.id, first.account_id, pending.type AS event_type, pending.data, NULL::uuid AS hook_id
           FROM unnest($9::int[], $10::uuid[], $11::text[], $12::json[]) AS pending (n, id, type, data)
           JOIN first ON first.n = pending.n
           JOIN recorded ON recorded.account_id = first.account_id AND recorded.conversation_id = first.conversation_id),
         ${recordEvents('pending', '$13')}
         SELECT id, account_id, event_type, fired_at, fans_out FROM fired`,
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
          relayGraceMs,
        ],
      );
      const recordedById = new Map(rows.map((row) => [row.id, row]));
      const results = calls.map(() => ({ recorded: false, fansOut: [] as FiredEvent[] }));
      for (const event of events) {
        const recorded = recordedById.get(event.id);
        if (!recorded) continue;
        results[event.n - 1]!.recorded = true;
        if (recorded.fans_out) results[event.n - 1]!.fansOut.push(firedEventOf(recorded));
      }
      return results;
    },
  };
}
