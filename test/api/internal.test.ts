import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { hashApiKey } from '../../src/domain/apiKey.js';
import { collectingQueue, INTERNAL_TOKEN, newKey, testServices } from '../support/app.js';
import { engines } from '../support/databases.js';
import { bearer, count, expectError, internalAuth, ISO_UTC, newAccount, useTestApp, snapshot, UUID } from '../support/http.js';

const PHONE = '+14155550100';

/** One request per first-party route, each one that the right token would get answered. */
const internalRoutes = (accountId: string, contactId: string, keyId: string): Array<[string, InjectOptions]> => [
  ['POST keys', { method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source: 'make' } }],
  ['GET keys', { method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` }],
  ['POST rotate', { method: 'POST', url: `/internal/v1/keys/${keyId}/rotate` }],
  ['DELETE key', { method: 'DELETE', url: `/internal/v1/keys/${keyId}` }],
  ['GET contact', { method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}` }],
  ['PATCH contact', { method: 'PATCH', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}`, payload: { name: 'Owner' } }],
  ['POST portal session', { method: 'POST', url: `/internal/v1/accounts/${accountId}/portal-sessions`, payload: { capabilities: ['read'] } }],
  ['DELETE portal sessions', { method: 'DELETE', url: `/internal/v1/accounts/${accountId}/portal-sessions` }],
  ['POST sync', { method: 'POST', url: `/internal/v1/accounts/${accountId}/contacts/sync`, payload: { phone: '+14155550199', source: 'hubspot' } }],
  [
    'POST calls',
    {
      method: 'POST',
      url: `/internal/v1/accounts/${accountId}/calls`,
      payload: { channel: 'voice', outcome: 'answered', spam: false, caller_name: 'Ann', caller_number: PHONE, summary: 'Hi' },
    },
  ],
];

describe.each(engines())('first-party API on %s', (engine) => {
  const t = useTestApp(engine);

  const internal = (options: InjectOptions) => t.app.inject({ ...options, headers: { ...internalAuth, ...options.headers } });

  /** An account with one key and one contact, so every route has something real to act on. */
  async function seeded() {
    const accountId = newAccount();
    const key = await newKey(t.store, accountId);
    const upsert = await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: { phone: PHONE, name: 'Ann' } });
    return { accountId, key, contactId: upsert.json().contact_id as string };
  }

  describe('without INTERNAL_API_TOKEN', () => {
    let hidden: FastifyInstance;

    beforeAll(async () => {
      const queue = collectingQueue().queue;
      hidden = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), services: testServices(t.store, queue) });
    });
    afterAll(async () => {
      await hidden?.close();
    });

    it('answers 404 not_found on every /internal route, with or without a token, and changes nothing', async () => {
      const { accountId, contactId, key } = await seeded();
      const before = await snapshot(t.db);
      for (const [, request] of internalRoutes(accountId, contactId, key.id)) {
        for (const headers of [{}, internalAuth, bearer('anything-at-all-long-enough')]) {
          expectError(await hidden.inject({ ...request, headers }), 404, 'not_found');
        }
      }
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('does not reveal the routes through 405 or an over-long path either', async () => {
      for (const request of [
        { method: 'PUT', url: `/internal/v1/keys/${randomUUID()}` },
        { method: 'GET', url: '/internal/v1/accounts/a/contacts/sync' },
        { method: 'DELETE', url: '/internal/v1/accounts/a/keys' },
        { method: 'GET', url: `/internal/v1/accounts/${'a'.repeat(200)}/keys` },
      ] as const) {
        expectError(await hidden.inject({ ...request, headers: internalAuth }), 404, 'not_found');
      }
    });

    it('still serves the public API', async () => {
      const key = await newKey(t.store, newAccount());
      expect((await hidden.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth })).statusCode).toBe(200);
    });
  });

  describe('token', () => {
    it.each([
      ['no Authorization header', {}],
      ['a wrong token', bearer('wrong-token-0123456789')],
      ['the token with a character less', bearer(INTERNAL_TOKEN.slice(0, -1))],
      ['the token in another scheme', { authorization: `Token ${INTERNAL_TOKEN}` }],
      // Basic is for the operators' pages in a browser; /internal is for machines, with Bearer.
      ['the token as a Basic password', { authorization: `Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}` }],
      ['the token as a Basic user name', { authorization: `Basic ${Buffer.from(`${INTERNAL_TOKEN}:`).toString('base64')}` }],
    ])('answers 401 unauthorized to %s on every route, changing nothing', async (_why, headers: Record<string, string>) => {
      const { accountId, contactId, key } = await seeded();
      const before = await snapshot(t.db);
      for (const [, request] of internalRoutes(accountId, contactId, key.id)) {
        expectError(await t.app.inject({ ...request, headers }), 401, 'unauthorized');
      }
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('answers 401 to a public API key', async () => {
      const { accountId, key } = await seeded();
      expectError(await t.app.inject({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys`, headers: key.auth }), 401, 'unauthorized');
    });
  });

  describe('keys', () => {
    it('creates a key: 201 {id, key, account_id, source, created_at}, key prefixed chk_, default source api', async () => {
      const accountId = newAccount();
      const response = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: {} });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toStrictEqual({
        id: expect.stringMatching(UUID),
        key: expect.stringMatching(/^chk_[A-Za-z0-9_-]{43}$/),
        account_id: accountId,
        source: 'api',
        created_at: expect.stringMatching(ISO_UTC),
      });
    });

    it('creates a key with a source and a name, with no body at all too', async () => {
      const accountId = newAccount();
      const labelled = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source: 'make', name: 'Make scenario' } });
      expect(labelled.statusCode).toBe(201);
      expect(labelled.json().source).toBe('make');
      const bare = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys` });
      expect(bare.statusCode).toBe(201);
      expect(bare.json().source).toBe('api');
    });

    it('issues a key that works on the public API as its account', async () => {
      const accountId = newAccount();
      const { key } = (await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source: 'make' } })).json();
      const upsert = await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: bearer(key), payload: { phone: PHONE } });
      expect(upsert.json().action).toBe('inserted');
      const contact = await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${upsert.json().contact_id}` });
      expect(contact.json().source).toBe('make');
    });

    it('stores the key only as its hash', async () => {
      const accountId = newAccount();
      const { id, key } = (await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: {} })).json();
      const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [id]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.key_hash).toBe(hashApiKey(key));
      expect(JSON.stringify(rows[0])).not.toContain(key.slice(4));
    });

    it.each([
      ['uppercase', 'Zapier'],
      ['with a space', 'my crm'],
      ['empty', ''],
      ['too long', 'a'.repeat(65)],
    ])('refuses a source that is %s with 400 invalid_source, storing nothing', async (_why, source) => {
      const accountId = newAccount();
      expectError(await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source } }), 400, 'invalid_source');
      expect(await count(t.db, 'api_keys WHERE account_id = $1', [accountId])).toBe(0);
    });

    it("lists the account's keys oldest first, without the key or its hash", async () => {
      const accountId = newAccount();
      await newKey(t.store, newAccount());
      const created = [];
      for (const source of ['zapier', 'make']) {
        created.push((await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source, name: source } })).json());
        await sleep(5); // PGlite's clock ticks in milliseconds: keys created within one are in no order
      }
      const response = await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({
        keys: created.map((key) => ({
          id: key.id,
          account_id: accountId,
          source: key.source,
          name: key.source,
          created_at: key.created_at,
          revoked_at: null,
          last_used_at: null,
        })),
      });
      for (const key of created) {
        expect(response.body).not.toContain(key.key);
        expect(response.body).not.toContain(hashApiKey(key.key));
      }
    });

    it('revokes a key: 200 {ok: true}, the key answers 401 at once, and the list shows it revoked', async () => {
      const { accountId, key } = await seeded();
      const response = await internal({ method: 'DELETE', url: `/internal/v1/keys/${key.id}` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ ok: true });
      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth }), 401, 'unauthorized');
      const [listed] = (await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` })).json().keys;
      expect(listed).toMatchObject({ id: key.id, revoked_at: expect.stringMatching(ISO_UTC) });
    });

    it('rotates a key: 200 {id, key, account_id, source, name, created_at}; the old secret is 401 at once, the new one keeps the subscriptions', async () => {
      const accountId = newAccount();
      const issued = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/keys`, payload: { source: 'zapier', name: 'Zap' } });
      const { id, key: oldKey, created_at } = issued.json();
      const subscribed = await t.app.inject({
        method: 'POST',
        url: '/api/v1/hooks',
        headers: bearer(oldKey),
        payload: { event: 'new_contact', target_url: 'https://example.com/rotated' },
      });
      expect(subscribed.statusCode).toBe(201);

      const response = await internal({ method: 'POST', url: `/internal/v1/keys/${id}/rotate` });
      expect(response.statusCode).toBe(200);
      const rotated = response.json();
      expect(rotated).toStrictEqual({
        id,
        key: expect.stringMatching(/^chk_[A-Za-z0-9_-]{43}$/),
        account_id: accountId,
        source: 'zapier',
        name: 'Zap',
        created_at,
      });
      expect(rotated.key).not.toBe(oldKey);

      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: bearer(oldKey) }), 401, 'unauthorized');
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(rotated.key) });
      expect(me.json()).toStrictEqual({ account_id: accountId, key: { id, source: 'zapier', name: 'Zap', created_at } });
      const hooks = await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: bearer(rotated.key) });
      expect(hooks.json().hooks.map((hook: { id: string }) => hook.id)).toStrictEqual([subscribed.json().id]);

      // Shown only here: the list holds the same one key, with no secret and nothing revoked.
      const listed = await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` });
      expect(listed.json().keys).toStrictEqual([
        { id, account_id: accountId, source: 'zapier', name: 'Zap', created_at, revoked_at: null, last_used_at: expect.stringMatching(ISO_UTC) },
      ]);
      expect(listed.body).not.toContain(rotated.key);
      expect(await count(t.db, 'api_keys WHERE key_hash = $1', [hashApiKey(rotated.key)])).toBe(1);
      expect(await count(t.db, 'api_keys WHERE key_hash = $1', [hashApiKey(oldKey)])).toBe(0);
    });

    it.each([
      ['unknown', async () => randomUUID()],
      ['malformed', async () => 'not-a-key-id'],
      [
        'revoked',
        async () => {
          const { key } = await seeded();
          expect((await internal({ method: 'DELETE', url: `/internal/v1/keys/${key.id}` })).statusCode).toBe(200);
          return key.id;
        },
      ],
    ])('answers 404 not_found when rotating a %s key id, changing nothing', async (_why, id) => {
      const keyId = await id();
      const before = await snapshot(t.db);
      expectError(await internal({ method: 'POST', url: `/internal/v1/keys/${keyId}/rotate` }), 404, 'not_found');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['unknown', () => randomUUID()],
      ['malformed', () => 'not-a-key-id'],
    ])('answers 404 not_found when revoking an %s key id, changing nothing', async (_why, id) => {
      await seeded();
      const before = await snapshot(t.db);
      expectError(await internal({ method: 'DELETE', url: `/internal/v1/keys/${id()}` }), 404, 'not_found');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('answers 200 {ok: true} when revoking a key twice, keeping the first revocation time', async () => {
      const { accountId, key } = await seeded();
      expect((await internal({ method: 'DELETE', url: `/internal/v1/keys/${key.id}` })).statusCode).toBe(200);
      const listRevokedAt = async () => (await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` })).json().keys[0].revoked_at as string;
      const first = await listRevokedAt();
      const again = await internal({ method: 'DELETE', url: `/internal/v1/keys/${key.id}` });
      expect({ status: again.statusCode, body: again.json() }).toStrictEqual({ status: 200, body: { ok: true } });
      expect(await listRevokedAt()).toBe(first);
      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth }), 401, 'unauthorized');
    });

    it('revokes only the key named: another key of the account keeps its subscriptions and access', async () => {
      const { accountId, key } = await seeded();
      const other = await newKey(t.store, accountId);
      const subscribe = (auth: Record<string, string>) =>
        t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: auth, payload: { event: 'new_contact', target_url: 'https://example.com/h' } });
      const revokedHook = (await subscribe(key.auth)).json().id;
      const keptHook = (await subscribe(other.auth)).json().id;
      expect((await internal({ method: 'DELETE', url: `/internal/v1/keys/${key.id}` })).statusCode).toBe(200);
      const listed = await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: other.auth });
      expect(listed.json().hooks.map((hook: { id: string }) => hook.id)).toStrictEqual([keptHook]);
      expect(await count(t.db, 'hooks WHERE id = $1 AND deleted_at IS NOT NULL', [revokedHook])).toBe(1);
      const keys = (await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/keys` })).json().keys;
      expect(keys.find((listedKey: { id: string }) => listedKey.id === other.id).revoked_at).toBeNull();
    });
  });

  describe('contacts', () => {
    it('reads a contact as {contact_id, phone, name, email, source, owner_fields}', async () => {
      const { accountId, contactId } = await seeded();
      const response = await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ contact_id: contactId, phone: PHONE, name: 'Ann', email: null, source: 'zapier', owner_fields: [] });
    });

    it.each([
      ['unknown', () => randomUUID()],
      ['malformed', () => 'nope'],
    ])('answers 404 not_found for an %s contact id', async (_why, id) => {
      const { accountId } = await seeded();
      expectError(await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${id()}` }), 404, 'not_found');
    });

    it('applies an owner edit: 200 with the contact, the fields marked owner-held', async () => {
      const { accountId, contactId } = await seeded();
      const response = await internal({
        method: 'PATCH',
        url: `/internal/v1/accounts/${accountId}/contacts/${contactId}`,
        payload: { name: ' Ann Owner ', email: 'owner@example.com' },
      });
      expect(response.statusCode).toBe(200);
      const expected = {
        contact_id: contactId,
        phone: PHONE,
        name: 'Ann Owner',
        email: 'owner@example.com',
        source: 'zapier',
        owner_fields: ['email', 'name'],
      };
      expect(response.json()).toStrictEqual(expected);
      expect((await internal({ method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}` })).json()).toStrictEqual(expected);
    });

    it('marks only the edited field owner-held, and keeps earlier ones', async () => {
      const { accountId, contactId } = await seeded();
      const url = `/internal/v1/accounts/${accountId}/contacts/${contactId}`;
      expect((await internal({ method: 'PATCH', url, payload: { email: 'o@example.com' } })).json().owner_fields).toStrictEqual(['email']);
      expect((await internal({ method: 'PATCH', url, payload: { name: 'Owner' } })).json()).toMatchObject({
        name: 'Owner',
        email: 'o@example.com',
        owner_fields: ['email', 'name'],
      });
    });

    it("answers 404 not_found to an owner edit of another account's contact, changing nothing", async () => {
      const { contactId } = await seeded();
      const before = await snapshot(t.db);
      expectError(
        await internal({ method: 'PATCH', url: `/internal/v1/accounts/${newAccount()}/contacts/${contactId}`, payload: { name: 'Thief' } }),
        404,
        'not_found',
      );
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['no field', {}, 'invalid_request'],
      ['an invalid email', { email: 'nope' }, 'invalid_email'],
      ['a name over 256 characters', { name: 'x'.repeat(257) }, 'invalid_name'],
      ['a name of the wrong type', { name: 1 }, 'invalid_request'],
    ])('answers 400 to an owner edit with %s, changing nothing', async (_why, payload, code) => {
      const { accountId, contactId } = await seeded();
      const before = await snapshot(t.db);
      expectError(await internal({ method: 'PATCH', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}`, payload }), 400, code);
      expect(await snapshot(t.db)).toStrictEqual(before);
    });
  });

  describe('CRM sync', () => {
    const sync = (accountId: string, payload: unknown) =>
      internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/contacts/sync`, payload: payload as object });

    it('answers like the public upsert: inserted, then updated, then skipped with a reason', async () => {
      const accountId = newAccount();
      const inserted = await sync(accountId, { phone: '415-555-0100', name: 'Ann', source: 'hubspot' });
      expect(inserted.statusCode).toBe(200);
      const { contact_id } = inserted.json();
      expect(inserted.json()).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID) });
      expect((await sync(accountId, { phone: PHONE, email: 'a@example.com', source: 'hubspot' })).json()).toStrictEqual({
        action: 'updated',
        contact_id,
      });
      expect((await sync(accountId, { phone: PHONE, email: 'bad', source: 'hubspot' })).json()).toStrictEqual({
        action: 'skipped',
        contact_id,
        reason: 'invalid_email',
      });
    });

    it('answers 400 missing_phone to a sync without a phone, storing nothing', async () => {
      const accountId = newAccount();
      expectError(await sync(accountId, { phone: ' ', name: 'Ann', source: 'hubspot' }), 400, 'missing_phone');
      expectError(await sync(accountId, { name: 'Ann', source: 'hubspot' }), 400, 'missing_phone');
      expect(await count(t.db, 'contacts WHERE account_id = $1', [accountId])).toBe(0);
    });

    it.each([
      ['missing', undefined],
      ['not a label', 'Hub Spot'],
      ['not a string', 7],
    ])('answers 400 invalid_source when the source is %s, storing nothing', async (_why, source) => {
      const accountId = newAccount();
      expectError(await sync(accountId, { phone: PHONE, source }), 400, 'invalid_source');
      expect(await count(t.db, 'contacts WHERE account_id = $1', [accountId])).toBe(0);
    });
  });

  describe('calls', () => {
    it('answers the events a voicemail fires and records them for the feed, queuing a job only for the type someone subscribed to', async () => {
      const accountId = newAccount();
      const key = await newKey(t.store, accountId);
      const hook = await t.app.inject({
        method: 'POST',
        url: '/api/v1/hooks',
        headers: key.auth,
        payload: { event: 'missed_call', target_url: 'https://hooks.example.com/calls' },
      });
      expect(hook.statusCode).toBe(201);
      const payload = {
        conversation_id: randomUUID(),
        channel: 'voice',
        outcome: 'voicemail',
        spam: false,
        caller_name: 'Ann',
        caller_number: PHONE,
        summary: 'Call back',
      };
      const reported = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/calls`, payload });
      expect(reported.json()).toStrictEqual({ conversation_id: payload.conversation_id, events: ['new_conversation', 'missed_call'] });
      expect(await count(t.db, 'events WHERE account_id = $1', [accountId])).toBe(2);
      expect(
        t
          .enqueued()
          .filter((event) => event.account_id === accountId)
          .map((event) => event.event),
      ).toStrictEqual(['missed_call']);
      expect(await count(t.db, "event_outbox WHERE account_id = $1 AND event_type = 'missed_call'", [accountId])).toBe(1);
      expect(await count(t.db, "event_outbox WHERE account_id = $1 AND event_type = 'new_conversation'", [accountId])).toBe(0);
      // Reported again: nothing more is recorded or fired.
      expect((await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/calls`, payload })).json().events).toStrictEqual([]);
      expect(await count(t.db, 'events WHERE account_id = $1', [accountId])).toBe(2);
    });

    it.each([
      ['an empty object', {}],
      ['an unknown channel', { channel: 'fax', outcome: 'answered', spam: false, caller_name: 'A', caller_number: PHONE, summary: '' }],
      ['spam as a string', { channel: 'voice', outcome: 'answered', spam: 'no', caller_name: 'A', caller_number: PHONE, summary: '' }],
      ['an array', []],
    ])('answers 400 {error} to a call body that is %s, recording nothing', async (_why, payload) => {
      const accountId = newAccount();
      const before = await snapshot(t.db);
      const callsBefore = await count(t.db, 'calls');
      const response = await internal({ method: 'POST', url: `/internal/v1/accounts/${accountId}/calls`, payload });
      expectError(response, 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
      expect(await count(t.db, 'calls')).toBe(callsBefore);
    });
  });
});
