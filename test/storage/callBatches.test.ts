import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testServices } from '../support/app.js';
import { engines, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const voicemail = {
  channel: 'voice' as const,
  outcome: 'voicemail' as const,
  spam: false,
  caller_name: 'Ann',
  caller_number: '+14155550100',
  summary: 'Call me',
};

/**
 * Calls reported at the same time are recorded together, one statement and one commit for the
 * batch (group commit). No batching may lose a call's events or fire a conversation twice.
 */
describe.each(engines())('calls reported at once on %s', (engine) => {
  const t = useTestStore(engine);

  it('records every call and fires each one’s events, however many arrive together', async () => {
    const calls = testServices(t.store).calls;
    const accountId = newAccount();
    const answers = await Promise.all(Array.from({ length: 60 }, () => calls.report(accountId, voicemail)));
    expect(answers.every((answer) => answer.events.join() === 'new_conversation,missed_call')).toBe(true);
    const { rows } = await t.db.query<{ calls: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM calls WHERE account_id = $1) AS calls, (SELECT count(*)::int FROM events WHERE account_id = $1) AS events`,
      [accountId],
    );
    expect(rows[0]).toStrictEqual({ calls: 60, events: 120 });
  });

  it('fires a conversation reported many times at once exactly once, in whichever batch', async () => {
    const calls = testServices(t.store).calls;
    const accountId = newAccount();
    const conversationId = randomUUID();
    const answers = await Promise.all(Array.from({ length: 25 }, () => calls.report(accountId, { ...voicemail, conversation_id: conversationId })));
    expect(answers.filter((answer) => answer.events.length > 0)).toHaveLength(1);
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE account_id = $1`, [accountId]);
    expect(rows[0]!.n).toBe(2);
  });
});
