import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { newKey } from '../support/app.js';
import { engines } from '../support/databases.js';
import { count, expectError, internalAuth, ISO_UTC, newAccount, useTestApp, snapshot, UUID } from '../support/http.js';

const MAX_HOOKS = 3;
const TARGET = 'https://hooks.example.com/receive';

describe.each(engines())('hooks API on %s', (engine) => {
  const t = useTestApp(engine, { MAX_HOOKS_PER_KEY: String(MAX_HOOKS) });

  /** A key of its own (of a fresh account unless one is given), with the hook calls made as it. */
  async function client(accountId = newAccount()) {
    const key = await newKey(t.store, accountId);
    return {
      key,
      accountId,
      subscribe: (body: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: key.auth, payload: body as object }),
      list: async () => {
        const response = await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth });
        expect(response.statusCode).toBe(200);
        return response.json<{ hooks: Array<{ id: string; event_type: string; target_url: string; max_per_second: number | null; created_at: string }> }>()
          .hooks;
      },
      unsubscribe: (id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/hooks/${id}`, headers: key.auth }),
      deliveries: (id: string) => t.app.inject({ method: 'GET', url: `/api/v1/hooks/${id}/deliveries`, headers: key.auth }),
    };
  }

  const liveHooksOfKey = (keyId: string) => count(t.db, 'hooks WHERE api_key_id = $1 AND deleted_at IS NULL', [keyId]);

  describe('subscribe', () => {
    it('answers 201 {id, event_type, target_url, max_per_second, created_at, secret}', async () => {
      const c = await client();
      const before = Date.now();
      const response = await c.subscribe({ event: 'new_contact', target_url: TARGET });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toStrictEqual({
        id: expect.stringMatching(UUID),
        event_type: 'new_contact',
        target_url: TARGET,
        max_per_second: null,
        created_at: expect.stringMatching(ISO_UTC),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{20,}$/),
      });
      const created = Date.parse(body.created_at);
      expect(created).toBeGreaterThanOrEqual(before - 5_000);
      expect(created).toBeLessThanOrEqual(Date.now() + 5_000);
    });

    it.each(['new_conversation', 'missed_call', 'new_contact'])('accepts the event %s', async (event) => {
      const c = await client();
      const response = await c.subscribe({ event, target_url: TARGET });
      expect(response.statusCode).toBe(201);
      expect(response.json().event_type).toBe(event);
    });

    it('gives every subscription its own secret', async () => {
      const c = await client();
      const a = (await c.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      const b = (await c.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      expect(a.secret).not.toBe(b.secret);
      expect(a.id).not.toBe(b.id);
    });

    it.each([
      ['unknown', { event: 'contact_created', target_url: TARGET }],
      ['missing', { target_url: TARGET }],
      ['empty', { event: '', target_url: TARGET }],
      ['not a string', { event: 1, target_url: TARGET }],
      ['of another case', { event: 'NEW_CONTACT', target_url: TARGET }],
    ])('answers 400 invalid_event when the event is %s, creating nothing', async (_why, body) => {
      const c = await client();
      const before = await snapshot(t.db);
      expectError(await c.subscribe(body), 400, 'invalid_event');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['unparseable', 'not a url'],
      ['relative', '/receive'],
      ['http:', 'http://hooks.example.com/receive'],
      ['without a host', 'https://'],
      ['with credentials', 'https://user:pw@hooks.example.com/receive'],
      ['wrapped in spaces', ` ${TARGET} `],
      ['over 2048 characters', `https://hooks.example.com/${'a'.repeat(2048)}`],
      ['not a string', 42],
    ])('answers 400 invalid_target_url when target_url is %s, creating nothing', async (_why, target_url) => {
      const c = await client();
      const before = await snapshot(t.db);
      expectError(await c.subscribe({ event: 'new_contact', target_url }), 400, 'invalid_target_url');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([1, 20, 1000])('takes max_per_second %d and shows it in the answer and the list', async (rate) => {
      const c = await client();
      const response = await c.subscribe({ event: 'new_contact', target_url: TARGET, max_per_second: rate });
      expect(response.statusCode).toBe(201);
      expect(response.json().max_per_second).toBe(rate);
      expect((await c.list()).map((hook) => hook.max_per_second)).toStrictEqual([rate]);
    });

    it('reads max_per_second null as the service default', async () => {
      const c = await client();
      const response = await c.subscribe({ event: 'new_contact', target_url: TARGET, max_per_second: null });
      expect(response.statusCode).toBe(201);
      expect(response.json().max_per_second).toBeNull();
    });

    it.each([
      ['zero', 0],
      ['over 1000', 1001],
      ['negative', -5],
      ['a fraction', 2.5],
      ['a string', '20'],
      ['a boolean', true],
    ])('answers 400 invalid_max_per_second when max_per_second is %s, creating nothing', async (_why, rate) => {
      const c = await client();
      const before = await snapshot(t.db);
      expectError(await c.subscribe({ event: 'new_contact', target_url: TARGET, max_per_second: rate }), 400, 'invalid_max_per_second');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('accepts a target_url of exactly 2048 characters', async () => {
      const c = await client();
      const base = 'https://hooks.example.com/';
      const target = base + 'a'.repeat(2048 - base.length);
      const response = await c.subscribe({ event: 'new_contact', target_url: target });
      expect(response.statusCode).toBe(201);
      expect(response.json().target_url).toBe(target);
    });

    it(`answers 409 hook_limit_reached past MAX_HOOKS_PER_KEY (${MAX_HOOKS}), and a delete frees a slot`, async () => {
      const c = await client();
      const ids = [];
      for (let i = 0; i < MAX_HOOKS; i++) {
        const response = await c.subscribe({ event: 'missed_call', target_url: `${TARGET}/${i}` });
        expect(response.statusCode).toBe(201);
        ids.push(response.json().id);
      }
      expectError(await c.subscribe({ event: 'missed_call', target_url: `${TARGET}/over` }), 409, 'hook_limit_reached');
      expect(await liveHooksOfKey(c.key.id)).toBe(MAX_HOOKS);

      expect((await c.unsubscribe(ids[0])).statusCode).toBe(200);
      expect((await c.subscribe({ event: 'missed_call', target_url: `${TARGET}/again` })).statusCode).toBe(201);
      expectError(await c.subscribe({ event: 'missed_call', target_url: `${TARGET}/over` }), 409, 'hook_limit_reached');
    });

    it('counts the limit per key: another key of the same account has its own', async () => {
      const c = await client();
      const other = await client(c.accountId);
      for (let i = 0; i < MAX_HOOKS; i++) await c.subscribe({ event: 'new_contact', target_url: TARGET });
      expect((await other.subscribe({ event: 'new_contact', target_url: TARGET })).statusCode).toBe(201);
    });

    it('never lets concurrent subscribes pass the limit', async () => {
      const c = await client();
      const responses = await Promise.all(Array.from({ length: 10 }, () => c.subscribe({ event: 'new_contact', target_url: TARGET })));
      expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(MAX_HOOKS);
      expect(responses.filter((response) => response.statusCode === 409)).toHaveLength(10 - MAX_HOOKS);
      expect(await liveHooksOfKey(c.key.id)).toBe(MAX_HOOKS);
    });
  });

  describe('list', () => {
    it("lists only the calling key's subscriptions, oldest first, without secrets", async () => {
      const c = await client();
      const sameAccount = await client(c.accountId);
      const created = [];
      for (const event of ['missed_call', 'new_contact', 'new_conversation']) {
        created.push((await c.subscribe({ event, target_url: `${TARGET}/${event}` })).json());
        await sleep(5); // PGlite's clock ticks in milliseconds: hooks created within one are in no order
      }
      await sameAccount.subscribe({ event: 'new_contact', target_url: `${TARGET}/other` });

      expect(await c.list()).toStrictEqual(
        created.map(({ id, event_type, target_url, max_per_second, created_at }) => ({
          id,
          event_type,
          target_url,
          max_per_second,
          created_at,
          state: 'active',
          disabled_reason: null,
          disabled_at: null,
          health: {
            last_delivered_at: null,
            last_failed_at: null,
            consecutive_failures: 0,
            skipped: 0,
            last_24h: { delivered: 0, failed: 0, refused: 0, expired: 0, unknown: 0 },
          },
        })),
      );
      expect((await sameAccount.list()).map((hook) => hook.target_url)).toStrictEqual([`${TARGET}/other`]);
    });

    it('answers {hooks: []} for a key with none', async () => {
      const c = await client();
      const response = await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: c.key.auth });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ hooks: [] });
    });
  });

  describe('unsubscribe', () => {
    it('answers 200 {ok: true} and the hook is gone from the list', async () => {
      const c = await client();
      const keep = (await c.subscribe({ event: 'new_contact', target_url: `${TARGET}/keep` })).json();
      const drop = (await c.subscribe({ event: 'new_contact', target_url: `${TARGET}/drop` })).json();
      const response = await c.unsubscribe(drop.id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ ok: true });
      expect((await c.list()).map((hook) => hook.id)).toStrictEqual([keep.id]);
    });

    it('answers 404 not_found when deleting the same hook twice', async () => {
      const c = await client();
      const { id } = (await c.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      expect((await c.unsubscribe(id)).statusCode).toBe(200);
      expectError(await c.unsubscribe(id), 404, 'not_found');
    });

    it.each([
      ['unknown', () => randomUUID()],
      ['malformed', () => 'not-a-uuid'],
      ['almost a UUID', () => `${randomUUID()}x`],
    ])('answers 404 not_found for an %s id, and nothing changes', async (_why, id) => {
      const c = await client();
      await c.subscribe({ event: 'new_contact', target_url: TARGET });
      const before = await snapshot(t.db);
      expectError(await c.unsubscribe(id()), 404, 'not_found');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it("answers 404 not_found for another key's hook, even of the same account, and it stays", async () => {
      const owner = await client();
      const { id } = (await owner.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      for (const intruder of [await client(owner.accountId), await client()]) {
        const before = await snapshot(t.db);
        expectError(await intruder.unsubscribe(id), 404, 'not_found');
        expect(await snapshot(t.db)).toStrictEqual(before);
      }
      expect((await owner.list()).map((hook) => hook.id)).toStrictEqual([id]);
    });
  });

  describe('revoking a key', () => {
    it("makes the key answer 401 at once and deletes its hooks, leaving other keys' hooks", async () => {
      const revoked = await client();
      const sibling = await client(revoked.accountId);
      await revoked.subscribe({ event: 'new_contact', target_url: `${TARGET}/1` });
      await revoked.subscribe({ event: 'missed_call', target_url: `${TARGET}/2` });
      const kept = (await sibling.subscribe({ event: 'new_contact', target_url: `${TARGET}/kept` })).json();

      const response = await t.app.inject({ method: 'DELETE', url: `/internal/v1/keys/${revoked.key.id}`, headers: internalAuth });
      expect(response.statusCode).toBe(200);

      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: revoked.key.auth }), 401, 'unauthorized');
      expect(await liveHooksOfKey(revoked.key.id)).toBe(0);
      expect((await sibling.list()).map((hook) => hook.id)).toStrictEqual([kept.id]);
      expect(await count(t.db, 'hooks WHERE account_id = $1 AND deleted_at IS NULL', [revoked.accountId])).toBe(1);
    });
  });

  describe('deliveries', () => {
    it('answers 200 {deliveries: []} for an own hook with no delivery yet', async () => {
      const c = await client();
      const { id } = (await c.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      const response = await c.deliveries(id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ deliveries: [], next_cursor: null });
    });

    it("answers 404 not_found for another key's hook, an unknown or a malformed id", async () => {
      const owner = await client();
      const intruder = await client(owner.accountId);
      const { id } = (await owner.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      expectError(await intruder.deliveries(id), 404, 'not_found');
      expectError(await owner.deliveries(randomUUID()), 404, 'not_found');
      expectError(await owner.deliveries('nope'), 404, 'not_found');
    });

    it('answers 404 not_found for a deleted hook', async () => {
      const c = await client();
      const { id } = (await c.subscribe({ event: 'new_contact', target_url: TARGET })).json();
      await c.unsubscribe(id);
      expectError(await c.deliveries(id), 404, 'not_found');
    });
  });
});
