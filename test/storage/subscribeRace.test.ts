import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, storedHook } from '../support/app.js';
import { openTestStore, upsertContact, withPostgres, type TestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

let phone = 14155550000;
const nextPhone = () => `+${phone++}`;

/**
 * An event is fanned out to exactly the subscriptions its recording statement saw: those
 * committed before it. A subscribe still open when the event is recorded is not one of them,
 * even though its row's creation time is earlier than the event's; and an account none of whose
 * subscriptions the statement saw gets no outbox row at all. Shown on the server, where a
 * transaction can stay open beside the upsert (PGlite has one connection).
 */
describe.runIf(withPostgres)('an event racing a subscribe, on postgres', () => {
  let opened: TestStore;
  let subscriber: pg.Client;
  beforeAll(async () => {
    opened = await openTestStore('postgres');
    subscriber = new pg.Client({ connectionString: opened.url });
    await subscriber.connect();
  });
  afterAll(async () => {
    await subscriber?.end();
    await opened?.cleanup();
  });

  /** Opens a transaction that inserts a new_contact hook of the account and leaves it open: commit or roll back with `subscriber`. */
  async function openSubscribe(accountId: string) {
    const key = await issueKey(opened.store, accountId);
    const id = randomUUID();
    await subscriber.query('BEGIN');
    await subscriber.query(
      `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, secret) VALUES ($1, $2, $3, 'new_contact', 'https://hooks.example.com/race', 'whsec_c2VjcmV0')`,
      [id, key.id, accountId],
    );
    return id;
  }

  const createdAt = async (table: 'hooks' | 'events', id: string) =>
    (await opened.db.query<{ at: Date }>(`SELECT created_at AS at FROM ${table} WHERE id = $1`, [id])).rows[0]!.at.getTime();
  const outboxRows = async (eventId: string) =>
    (await opened.db.query<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox WHERE event_id = $1', [eventId])).rows[0]!.n;
  const eventOfContact = async (contactId: string) =>
    (await opened.db.query<{ id: string }>("SELECT id FROM events WHERE data->>'contact_id' = $1", [contactId])).rows[0]!.id;

  it('records the event of an account whose only subscribe is still open with no outbox row and no job', async () => {
    const accountId = newAccount();
    const hookId = await openSubscribe(accountId);
    const upserted = await upsertContact(opened.store, accountId, { phone: nextPhone(), fields: {} }, 'crm');
    await subscriber.query('COMMIT');

    expect(upserted.action).toBe('inserted');
    expect('fired' in upserted && upserted.fired).toBeFalsy();
    const eventId = await eventOfContact(upserted.contactId);
    expect(await outboxRows(eventId)).toBe(0);
    // The hook's row was made first: a rule of creation times would have owed it the event.
    expect(await createdAt('hooks', hookId)).toBeLessThan(await createdAt('events', eventId));
  });

  it('fans an event out to the subscriptions committed before it, not to one still open while it was recorded', async () => {
    const accountId = newAccount();
    const committed = await storedHook(opened.store, accountId);
    const open = await openSubscribe(accountId);
    const upserted = await upsertContact(opened.store, accountId, { phone: nextPhone(), fields: {} }, 'crm');
    await subscriber.query('COMMIT');

    if (upserted.action !== 'inserted' || !upserted.fired) throw new Error(`the event of a subscribed account did not fan out: ${JSON.stringify(upserted)}`);
    const deliveries = await opened.store.events.fanOut([upserted.fired], 60_000);
    expect(deliveries.map((delivery) => delivery.hookId)).toStrictEqual([committed.hookId]);
    expect(await createdAt('hooks', open)).toBeLessThan(await createdAt('events', upserted.fired.event_id));

    // The next event sees both.
    const next = await upsertContact(opened.store, accountId, { phone: nextPhone(), fields: {} }, 'crm');
    if (next.action !== 'inserted' || !next.fired) throw new Error('the next event did not fan out');
    const nextDeliveries = await opened.store.events.fanOut([next.fired], 60_000);
    expect(nextDeliveries.map((delivery) => delivery.hookId).sort()).toStrictEqual([committed.hookId, open].sort());
  });

  it('fans an event out to a subscribe that committed before it, and none that rolled back', async () => {
    const accountId = newAccount();
    await openSubscribe(accountId);
    await subscriber.query('ROLLBACK');
    const none = await upsertContact(opened.store, accountId, { phone: nextPhone(), fields: {} }, 'crm');
    expect('fired' in none && none.fired).toBeFalsy();

    const hookId = await openSubscribe(accountId);
    await subscriber.query('COMMIT');
    const upserted = await upsertContact(opened.store, accountId, { phone: nextPhone(), fields: {} }, 'crm');
    if (upserted.action !== 'inserted' || !upserted.fired) throw new Error('the event of a subscribed account did not fan out');
    expect((await opened.store.events.fanOut([upserted.fired], 60_000)).map((delivery) => delivery.hookId)).toStrictEqual([hookId]);
  });
});
