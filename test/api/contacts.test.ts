import { describe, expect, it } from 'vitest';
import { newKey } from '../support/app.js';
import { engines } from '../support/databases.js';
import { count, expectError, getContact, internalAuth, newAccount, useTestApp, ownerEdit, snapshot, UUID } from '../support/http.js';

const PHONE = '+14155550100';
const TARGET = 'https://hooks.example.com/receive';

describe.each(engines())('contacts API on %s', (engine) => {
  const t = useTestApp(engine);

  /** A fresh account with one key; `upsert` posts as that key. */
  async function account(source = 'zapier') {
    const accountId = newAccount();
    const key = await newKey(t.store, accountId, source);
    const upsert = (body: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: body as object });
    const sync = (body: unknown) =>
      t.app.inject({ method: 'POST', url: `/internal/v1/accounts/${accountId}/contacts/sync`, headers: internalAuth, payload: body as object });
    /** Subscribes the account's key to `event`, new_contact unless said, so that a new contact has a delivery. */
    const subscribe = async (event = 'new_contact') => {
      const created = await t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: key.auth, payload: { event, target_url: TARGET } });
      expect(created.statusCode).toBe(201);
    };
    return { accountId, key, upsert, sync, subscribe };
  }

  /** The events of the account whose jobs were added to the events queue so far. */
  const enqueuedFor = (accountId: string) => t.enqueued().filter((event) => event.account_id === accountId);

  const newContactEvents = async (auth: Record<string, string>) => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/events?event=new_contact&limit=100', headers: auth });
    expect(response.statusCode).toBe(200);
    return response.json<{ events: Array<{ id: string; event: string; data: Record<string, unknown> }> }>().events;
  };

  const contactRows = (accountId: string) => count(t.db, 'contacts WHERE account_id = $1', [accountId]);

  describe('insert and update', () => {
    it('answers 200 inserted with a UUID contact_id for a new phone', async () => {
      const a = await account();
      const response = await a.upsert({ phone: PHONE, name: 'Ann Lee', email: 'ann@example.com' });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID) });
      expect(await getContact(t.app, a.accountId, body.contact_id)).toMatchObject({
        contact_id: body.contact_id,
        phone: PHONE,
        name: 'Ann Lee',
        email: 'ann@example.com',
      });
    });

    it('answers 200 updated with the same contact_id for a known phone, and writes the new values', async () => {
      const a = await account();
      const first = (await a.upsert({ phone: PHONE, name: 'Ann' })).json();
      const second = await a.upsert({ phone: PHONE, name: 'Ann Lee', email: 'ann@example.com' });
      expect(second.statusCode).toBe(200);
      expect(second.json()).toStrictEqual({ action: 'updated', contact_id: first.contact_id });
      expect(await getContact(t.app, a.accountId, first.contact_id)).toMatchObject({ name: 'Ann Lee', email: 'ann@example.com' });
      expect(await contactRows(a.accountId)).toBe(1);
    });

    it('matches +1 (415) 555-0100, +14155550100 and 415-555-0100 as one contact stored in E.164', async () => {
      const a = await account();
      const results = [];
      for (const phone of ['+1 (415) 555-0100', '+14155550100', '415-555-0100']) results.push((await a.upsert({ phone })).json());
      const id = results[0].contact_id;
      expect(results).toStrictEqual([
        { action: 'inserted', contact_id: id },
        { action: 'updated', contact_id: id },
        { action: 'updated', contact_id: id },
      ]);
      expect((await getContact(t.app, a.accountId, id)).phone).toBe(PHONE);
      expect(await contactRows(a.accountId)).toBe(1);
    });

    it('updates with only a phone, changing nothing', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      expect((await a.upsert({ phone: PHONE })).json()).toStrictEqual({ action: 'updated', contact_id });
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'Ann', email: 'ann@example.com' });
    });

    it('never blanks a stored name or email with an absent, empty or blank one', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      for (const body of [
        { phone: PHONE },
        { phone: PHONE, name: '', email: '' },
        { phone: PHONE, name: '   ', email: ' ' },
        { phone: PHONE, name: null, email: null },
      ]) {
        expect((await a.upsert(body)).json()).toStrictEqual({ action: 'updated', contact_id });
      }
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'Ann', email: 'ann@example.com' });
    });

    it('stores name and email trimmed', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: '  Ann Lee ', email: ' ann@example.com  ' })).json();
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'Ann Lee', email: 'ann@example.com' });
    });
  });

  describe('missing phone', () => {
    it.each([
      ['absent', { name: 'Ann' }],
      ['empty', { phone: '', name: 'Ann' }],
      ['all blank', { phone: '  \t ', name: 'Ann' }],
      ['null', { phone: null, name: 'Ann' }],
      ['an empty body object', {}],
    ])('answers 400 missing_phone when the phone is %s, and stores nothing', async (_why, body) => {
      const a = await account();
      const before = await snapshot(t.db);
      expectError(await a.upsert(body), 400, 'missing_phone');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });
  });

  describe('skipped', () => {
    it('skips an impossible phone as invalid_phone with a null contact_id, and stores nothing', async () => {
      const a = await account();
      const before = await snapshot(t.db);
      const response = await a.upsert({ phone: '12345', name: 'Ann' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ action: 'skipped', contact_id: null, reason: 'invalid_phone' });
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('skips an invalid email as invalid_email for a new phone, storing nothing', async () => {
      const a = await account();
      const before = await snapshot(t.db);
      expect((await a.upsert({ phone: PHONE, name: 'Ann', email: 'not-an-email' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id: null,
        reason: 'invalid_email',
      });
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('skips an invalid email as invalid_email for a known phone, naming the contact and changing nothing', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      const before = await snapshot(t.db);
      expect((await a.upsert({ phone: '415-555-0100', name: 'Other', email: 'bad@' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'invalid_email',
      });
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('skips a name over 256 characters as invalid_name, changing nothing', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann' })).json();
      const before = await snapshot(t.db);
      expect((await a.upsert({ phone: PHONE, name: 'x'.repeat(257) })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'invalid_name',
      });
      expect(await snapshot(t.db)).toStrictEqual(before);
    });
  });

  describe('owner edits', () => {
    it('skips as owner_edited, with the contact_id, when every field sent is owner-held', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      expect((await ownerEdit(t.app, a.accountId, contact_id, { name: 'Owner Name' })).statusCode).toBe(200);
      expect((await a.upsert({ phone: PHONE, name: 'Zap Name' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'owner_edited',
      });
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'Owner Name', email: 'ann@example.com' });
    });

    it('updates the fields the owner never edited and keeps the owner-held one', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      await ownerEdit(t.app, a.accountId, contact_id, { name: 'Owner Name' });
      expect((await a.upsert({ phone: PHONE, name: 'Zap Name', email: 'new@example.com' })).json()).toStrictEqual({
        action: 'updated',
        contact_id,
      });
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'Owner Name', email: 'new@example.com' });
    });

    it('holds a field the owner cleared: a later upsert does not fill it', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      expect((await ownerEdit(t.app, a.accountId, contact_id, { email: null })).json()).toMatchObject({ email: null });
      expect((await a.upsert({ phone: PHONE, email: 'again@example.com' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'owner_edited',
      });
      expect((await getContact(t.app, a.accountId, contact_id)).email).toBeNull();
    });

    it('holds owner edits against a CRM sync as well', async () => {
      const a = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann', email: 'ann@example.com' })).json();
      await ownerEdit(t.app, a.accountId, contact_id, { email: 'owner@example.com' });
      expect((await a.sync({ phone: PHONE, email: 'crm@example.com', source: 'hubspot' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'owner_edited',
      });
      expect((await a.sync({ phone: PHONE, name: 'CRM Name', email: 'crm@example.com', source: 'hubspot' })).json()).toStrictEqual({
        action: 'updated',
        contact_id,
      });
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ name: 'CRM Name', email: 'owner@example.com' });
    });
  });

  describe('accounts and sources', () => {
    it("keeps two accounts' contacts with the same phone apart", async () => {
      const a = await account();
      const b = await account();
      const first = (await a.upsert({ phone: PHONE, name: 'Ann' })).json();
      const second = (await b.upsert({ phone: PHONE, name: 'Bob' })).json();
      expect(first.action).toBe('inserted');
      expect(second.action).toBe('inserted');
      expect(second.contact_id).not.toBe(first.contact_id);
      expect((await getContact(t.app, a.accountId, first.contact_id)).name).toBe('Ann');
      expect((await getContact(t.app, b.accountId, second.contact_id)).name).toBe('Bob');
      expect(await count(t.db, 'contacts WHERE phone = $1 AND account_id IN ($2, $3)', [PHONE, a.accountId, b.accountId])).toBe(2);
    });

    it("does not show one account's contact to another", async () => {
      const a = await account();
      const b = await account();
      const { contact_id } = (await a.upsert({ phone: PHONE })).json();
      const response = await t.app.inject({ method: 'GET', url: `/internal/v1/accounts/${b.accountId}/contacts/${contact_id}`, headers: internalAuth });
      expectError(response, 404, 'not_found');
    });

    it("gives a contact created through the public API the source of the key's label", async () => {
      const a = await account('make');
      const { contact_id } = (await a.upsert({ phone: PHONE })).json();
      expect((await getContact(t.app, a.accountId, contact_id)).source).toBe('make');
    });

    it("gives a contact created by a CRM sync the CRM's source", async () => {
      const a = await account();
      const response = await a.sync({ phone: PHONE, name: 'Ann', source: 'hubspot' });
      expect(response.statusCode).toBe(200);
      const { contact_id } = response.json();
      expect(await getContact(t.app, a.accountId, contact_id)).toMatchObject({ phone: PHONE, name: 'Ann', source: 'hubspot' });
    });

    it('lets the public upsert and a CRM sync meet on one contact, which keeps its creator as source', async () => {
      const a = await account('zapier');
      const synced = (await a.sync({ phone: '415-555-0100', name: 'Ann', source: 'salesforce' })).json();
      const upserted = (await a.upsert({ phone: '+1 (415) 555-0100', email: 'ann@example.com' })).json();
      expect(synced).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID) });
      expect(upserted).toStrictEqual({ action: 'updated', contact_id: synced.contact_id });
      expect(await getContact(t.app, a.accountId, synced.contact_id)).toMatchObject({
        name: 'Ann',
        email: 'ann@example.com',
        source: 'salesforce',
      });
      expect(await contactRows(a.accountId)).toBe(1);
    });
  });

  describe('concurrency', () => {
    it('answers exactly one inserted and the rest updated for 40 concurrent upserts of one new phone, with one row', async () => {
      const a = await account();
      const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => a.upsert({ phone: i % 2 ? '415-555-0100' : PHONE, name: `Caller ${i}` })));
      expect(responses.map((response) => response.statusCode)).toStrictEqual(Array(40).fill(200));
      const bodies = responses.map((response) => response.json());
      expect(bodies.filter((body) => body.action === 'inserted')).toHaveLength(1);
      expect(bodies.filter((body) => body.action === 'updated')).toHaveLength(39);
      expect(new Set(bodies.map((body) => body.contact_id)).size).toBe(1);
      expect(await contactRows(a.accountId)).toBe(1);
      expect(await count(t.db, "events WHERE account_id = $1 AND event_type = 'new_contact'", [a.accountId])).toBe(1);
    });
  });

  describe('new_contact event', () => {
    it('records new_contact once on insert with data exactly {contact_id, name, phone, source}, in the outbox, and enqueues its job', async () => {
      const a = await account('zapier');
      await a.subscribe();
      const { contact_id } = (await a.upsert({ phone: '415-555-0100', name: 'Ann Lee', email: 'ann@example.com' })).json();
      const events = await newContactEvents(a.key.auth);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toStrictEqual({ contact_id, name: 'Ann Lee', phone: PHONE, source: 'zapier' });
      // Recorded by the upsert's own statement with its outbox row; fanned out by the job's worker, not here.
      expect(enqueuedFor(a.accountId)).toStrictEqual([
        { event_id: events[0]!.id, event: 'new_contact', account_id: a.accountId, fired_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/) },
      ]);
      expect(await count(t.db, 'event_outbox WHERE event_id = $1', [events[0]!.id])).toBe(1);
      expect(await count(t.db, 'deliveries WHERE account_id = $1', [a.accountId])).toBe(0);
    });

    it('records the new_contact of an account with no new_contact subscription for the feed only: no outbox row, no job', async () => {
      const a = await account();
      await a.subscribe('missed_call');
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann' })).json();
      const events = await newContactEvents(a.key.auth);
      expect(events.map((event) => event.data)).toStrictEqual([{ contact_id, name: 'Ann', phone: PHONE, source: 'zapier' }]);
      expect(await count(t.db, 'event_outbox WHERE event_id = $1', [events[0]!.id])).toBe(0);
      expect(enqueuedFor(a.accountId)).toStrictEqual([]);
    });

    it('gives name "" in new_contact when the contact was created without one', async () => {
      const a = await account('api');
      const { contact_id } = (await a.upsert({ phone: PHONE })).json();
      const events = await newContactEvents(a.key.auth);
      expect(events.map((event) => event.data)).toStrictEqual([{ contact_id, name: '', phone: PHONE, source: 'api' }]);
    });

    it('records no event on update or skip, and enqueues nothing', async () => {
      const a = await account();
      await a.subscribe();
      const { contact_id } = (await a.upsert({ phone: PHONE, name: 'Ann' })).json();
      expect(enqueuedFor(a.accountId)).toHaveLength(1);
      await a.upsert({ phone: PHONE, name: 'Ann Lee' });
      await a.upsert({ phone: PHONE, email: 'bad' });
      await ownerEdit(t.app, a.accountId, contact_id, { name: 'Owner' });
      expect((await a.upsert({ phone: PHONE, name: 'x' })).json().action).toBe('skipped');
      await a.upsert({ phone: '123' });
      expect(await newContactEvents(a.key.auth)).toHaveLength(1);
      expect(await count(t.db, 'events WHERE account_id = $1', [a.accountId])).toBe(1);
      expect(enqueuedFor(a.accountId)).toHaveLength(1);
    });

    it('records new_contact for a contact created by a CRM sync, with the CRM as source', async () => {
      const a = await account();
      await a.subscribe();
      const { contact_id } = (await a.sync({ phone: PHONE, name: 'Ann', source: 'hubspot' })).json();
      const events = await newContactEvents(a.key.auth);
      expect(events.map((event) => event.data)).toStrictEqual([{ contact_id, name: 'Ann', phone: PHONE, source: 'hubspot' }]);
      expect(enqueuedFor(a.accountId)).toHaveLength(1);
    });

    it("does not show one account's events to another account's key", async () => {
      const a = await account();
      const b = await account();
      await a.upsert({ phone: PHONE });
      expect(await newContactEvents(b.key.auth)).toStrictEqual([]);
    });
  });

  describe('request shape', () => {
    it.each([
      ['phone is a number', { phone: 14155550100 }],
      ['name is a number', { phone: PHONE, name: 5 }],
      ['email is an object', { phone: PHONE, email: { a: 1 } }],
    ])('answers 400 invalid_request when %s, storing nothing', async (_why, body) => {
      const a = await account();
      const before = await snapshot(t.db);
      expectError(await a.upsert(body), 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('ignores unknown fields', async () => {
      const a = await account();
      const response = await a.upsert({ phone: PHONE, company: 'Acme', source: 'evil' });
      expect(response.json()).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID) });
      expect((await getContact(t.app, a.accountId, response.json().contact_id)).source).toBe('zapier');
    });
  });
});
