import { randomUUID } from 'node:crypto';
import { eventsForCall, type CallReport } from '../domain/calls.js';
import { InvalidInputError } from '../domain/errors.js';
import type { PendingEvent } from '../domain/events.js';
import { normalisePhone } from '../domain/phone.js';
import type { UseCaseDeps } from './types.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { groupCommit } from '../storage/groupCommit.js';
import type { CallToRecord } from '../storage/calls.js';

export interface CallInput extends CallReport {
  conversation_id?: string | undefined;
  caller_name: string;
  caller_number: string;
  summary: string;
}

/** Finished calls, as telephony reports them. */
export function callServices(deps: UseCaseDeps) {
  const { store, config } = deps;
  // Calls reported at the same time share one statement and one commit, which records their
  // events too; the jobs of those someone subscribed to are added once committed.
  const recorded = groupCommit(async (calls: CallToRecord[]) => {
    const results = await store.calls.record(calls, RELAY_GRACE_MS);
    deps.enqueue(results.flatMap((result) => result.fansOut));
    return results;
  });
  return {
    /** Records a finished conversation and fires its events; a conversation reported twice fires once. */
    async report(accountId: string, call: CallInput) {
      const types = eventsForCall(call);
      // Subscribers are promised E.164; a firing call whose number cannot be read is the reporter's error.
      const callerNumber = normalisePhone(call.caller_number, config.DEFAULT_COUNTRY);
      if (types.length > 0 && !callerNumber) throw new InvalidInputError('invalid_caller_number');
      const conversationId = call.conversation_id ?? randomUUID();
      const data = {
        conversation_id: conversationId,
        channel: 'voice' as const,
        caller_name: call.caller_name,
        caller_number: callerNumber ?? call.caller_number,
        summary: call.summary,
      };
      const events: PendingEvent[] = types.map((type) => ({ type, data }) as PendingEvent);
      const result = await recorded.submit({
        accountId,
        call: { ...call, conversationId, callerName: call.caller_name, callerNumber: data.caller_number },
        events,
      });
      // A conversation reported before records nothing and fires none.
      return { conversation_id: conversationId, events: result.recorded ? types : [] };
    },
  };
}
