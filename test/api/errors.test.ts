import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newKey } from '../support/app.js';
import { engines, openTestStore } from '../support/databases.js';
import { count, expectError, internalAuth, newAccount, useTestApp, snapshot } from '../support/http.js';

const PHONE = '+14155550100';
const TARGET = 'https://hooks.example.com/receive';

describe.each(engines())('error responses on %s', (engine) => {
  const t = useTestApp(engine);
  let auth: Record<string, string>;

  beforeAll(async () => {
    auth = (await newKey(t.store, newAccount())).auth;
  });

  const json = { 'content-type': 'application/json' };

  describe('request bodies', () => {
    it.each([
      ['/api/v1/contacts', '{"phone":'],
      ['/api/v1/contacts', "{'phone': '+14155550100'}"],
      ['/api/v1/hooks', '{"event":"new_contact",}'],
      ['/api/v1/hooks', 'not json'],
    ])('answers 400 invalid_json to malformed JSON on %s (%j), changing nothing', async (url, payload) => {
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'POST', url, headers: { ...auth, ...json }, payload }), 400, 'invalid_json');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['an array', '[{"phone":"+14155550100"}]'],
      ['a string', '"+14155550100"'],
      ['null', 'null'],
      ['a number', '14155550100'],
      ['true', 'true'],
      ['empty', ''],
    ])('answers 400 invalid_request to a contacts body that is %s, changing nothing', async (_why, payload) => {
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: { ...auth, ...json }, payload }), 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"new_contact"'],
      ['null', 'null'],
    ])('answers 400 invalid_request to a hooks body that is %s, changing nothing', async (_why, payload) => {
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: { ...auth, ...json }, payload }), 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['phone is a number', { phone: 14155550100 }],
      ['phone is an array', { phone: [PHONE] }],
      ['name is a boolean', { phone: PHONE, name: true }],
      ['email is a number', { phone: PHONE, email: 1 }],
    ])('answers 400 invalid_request when %s', async (_why, body) => {
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: auth, payload: body }), 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it.each([
      ['text/plain', '{"phone":"+14155550100"}'],
      ['application/x-www-form-urlencoded', 'phone=%2B14155550100'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="phone"\r\n\r\n+14155550100\r\n--x--'],
      ['application/xml', '<phone>+14155550100</phone>'],
    ])('answers 415 unsupported_media_type to a %s body, changing nothing', async (type, payload) => {
      const before = await snapshot(t.db);
      const response = await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: { ...auth, 'content-type': type }, payload });
      expectError(response, 415, 'unsupported_media_type');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('answers 415 unsupported_media_type to a body with no content type', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: auth, payload: '{"event":"new_contact"}' });
      expectError(response, 415, 'unsupported_media_type');
    });

    it('accepts application/json with a charset', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/contacts',
        headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
        payload: JSON.stringify({ phone: '+14155550111' }),
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().action).toBe('inserted');
    });

    it('answers 413 payload_too_large to a body over 64 KiB, changing nothing', async () => {
      const payload = JSON.stringify({ phone: '+14155550122', name: 'x'.repeat(64 * 1024) });
      expect(Buffer.byteLength(payload)).toBeGreaterThan(64 * 1024);
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: { ...auth, ...json }, payload }), 413, 'payload_too_large');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('accepts a body of exactly 64 KiB', async () => {
      const head = JSON.stringify({ phone: '+14155550133', padding: '' });
      const payload = head.replace('"padding":""', `"padding":"${'x'.repeat(64 * 1024 - head.length)}"`);
      expect(Buffer.byteLength(payload)).toBe(64 * 1024);
      const response = await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: { ...auth, ...json }, payload });
      expect(response.statusCode).toBe(200);
    });

    it('accepts a bodiless DELETE that says content-type: application/json', async () => {
      const { id } = (
        await t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: auth, payload: { event: 'new_contact', target_url: TARGET } })
      ).json();
      const response = await t.app.inject({ method: 'DELETE', url: `/api/v1/hooks/${id}`, headers: { ...auth, ...json } });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ ok: true });
    });

    it('accepts a bodiless GET that says content-type: application/json', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: { ...auth, ...json } });
      expect(response.statusCode).toBe(200);
    });
  });

  describe('text PostgreSQL cannot store', () => {
    // A NUL character cannot be stored in a text column: it must be refused as the client's error, never a 500.
    it.each([
      ['a contact name', '/api/v1/contacts', { phone: PHONE, name: 'Ann\u0000' }],
      ['a contact email', '/api/v1/contacts', { phone: PHONE, email: 'ann\u0000@example.com' }],
      ['a target_url', '/api/v1/hooks', { event: 'new_contact', target_url: `${TARGET}/\u0000` }],
    ])('answers 400, not 5xx, to a NUL in %s, changing nothing', async (_what, url, body) => {
      const before = await snapshot(t.db);
      const response = await t.app.inject({ method: 'POST', url, headers: auth, payload: body });
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json())).toStrictEqual(['error']);
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('answers 400 invalid_request, not 5xx, to a NUL in an internal body or account id', async () => {
      const before = await snapshot(t.db);
      expectError(
        await t.app.inject({ method: 'POST', url: '/internal/v1/accounts/acct-x/keys', headers: internalAuth, payload: { name: 'key\u0000' } }),
        400,
        'invalid_request',
      );
      expectError(await t.app.inject({ method: 'GET', url: '/internal/v1/accounts/acct%00x/keys', headers: internalAuth }), 400, 'invalid_request');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('accepts the text "\\u0000" itself (a backslash, not a NUL)', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/contacts',
        headers: { ...auth, ...json },
        payload: '{"phone":"+14155550144","name":"literally \\\\u0000"}',
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().action).toBe('inserted');
    });
  });

  describe('routes and methods', () => {
    it.each([
      ['GET', '/api/v1/nope'],
      ['POST', '/api/v1/contact'],
      ['GET', '/api/v2/hooks'],
      ['GET', '/nope'],
      ['GET', '/'],
      ['DELETE', '/api/v1/hooks/a/b/c'],
      ['GET', '/api/v1/hooks/'],
      ['DELETE', '/api/v1/hooks/'],
      ['GET', '/api/v1/openapiXjson'],
    ])('answers 404 not_found to %s %s', async (method, url) => {
      expectError(await t.app.inject({ method: method as 'GET', url, headers: auth }), 404, 'not_found');
    });

    it('answers 404 not_found to an unknown route without a key too', async () => {
      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/nope' }), 404, 'not_found');
    });

    it.each([
      ['GET', '/api/v1/contacts', 'POST'],
      ['PUT', '/api/v1/contacts', 'POST'],
      ['DELETE', '/api/v1/contacts', 'POST'],
      ['PUT', '/api/v1/hooks', 'POST, GET, HEAD'],
      ['PATCH', '/api/v1/hooks', 'POST, GET, HEAD'],
      ['PUT', `/api/v1/hooks/${randomUUID()}`, 'GET, HEAD, DELETE'],
      ['POST', `/api/v1/hooks/${randomUUID()}`, 'GET, HEAD, DELETE'],
      ['POST', '/api/v1/events', 'GET, HEAD'],
      ['POST', '/healthz', 'GET, HEAD'],
    ])('answers 405 method_not_allowed to %s %s, with Allow: %s', async (method, url, allow) => {
      const response = await t.app.inject({ method: method as 'GET', url, headers: auth });
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.allow).toBe(allow);
    });

    it('answers 405 without touching storage: a POST to a hook id creates nothing', async () => {
      const before = await snapshot(t.db);
      await t.app.inject({ method: 'POST', url: `/api/v1/hooks/${randomUUID()}`, headers: auth, payload: { event: 'new_contact', target_url: TARGET } });
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('answers {"error": code} to a path that is not valid percent-encoding', async () => {
      expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/hooks/%ZZ', headers: auth }), 400, 'invalid_request');
    });

    it('answers 404 not_found to a hook id far too long to be one', async () => {
      const before = await snapshot(t.db);
      expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/hooks/${'a'.repeat(500)}`, headers: auth }), 404, 'not_found');
      expect(await snapshot(t.db)).toStrictEqual(before);
    });

    it('serves internal routes for an account id of 128 characters', async () => {
      const response = await t.app.inject({ method: 'GET', url: `/internal/v1/accounts/${'a'.repeat(128)}/keys`, headers: internalAuth });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ keys: [] });
    });
  });

  describe('rate limit', () => {
    let limited: FastifyInstance;

    beforeAll(async () => {
      limited = (await buildTestApp(t.store, { RATE_LIMIT_PER_MINUTE: '5' })).app;
    });
    afterAll(async () => {
      await limited?.close();
    });

    it('answers the 6th request of a key in a minute 429 rate_limited with Retry-After, storing nothing', async () => {
      const accountId = newAccount();
      const key = await newKey(t.store, accountId);
      for (let i = 0; i < 5; i++) {
        expect((await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth })).statusCode).toBe(200);
      }
      const response = await limited.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: { phone: PHONE } });
      expectError(response, 429, 'rate_limited');
      const retryAfter = Number(response.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await count(t.db, 'contacts WHERE account_id = $1', [accountId])).toBe(0);
    });

    it('counts per key: another key, even of the same account, is unaffected', async () => {
      const accountId = newAccount();
      const busy = await newKey(t.store, accountId);
      const sibling = await newKey(t.store, accountId);
      const stranger = await newKey(t.store, newAccount());
      for (let i = 0; i < 6; i++) await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: busy.auth });
      expectError(await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: busy.auth }), 429, 'rate_limited');
      expect((await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: sibling.auth })).statusCode).toBe(200);
      expect((await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: stranger.auth })).statusCode).toBe(200);
    });

    it('does not count requests refused as unauthorized against anyone', async () => {
      const key = await newKey(t.store, newAccount());
      for (let i = 0; i < 10; i++) {
        expectError(await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: { authorization: 'Bearer nope' } }), 401, 'unauthorized');
      }
      expect((await limited.inject({ method: 'GET', url: '/api/v1/hooks', headers: key.auth })).statusCode).toBe(200);
    });
  });

  describe('unexpected failures', () => {
    it('answers 500 {"error":"internal"} with no internals when storage fails', async () => {
      const broken = await openTestStore(engine);
      const { app: brokenApp } = await buildTestApp(broken.store);
      try {
        const key = await newKey(broken.store, newAccount());
        await broken.db.exec('DROP TABLE hooks CASCADE');
        const response = await brokenApp.inject({
          method: 'POST',
          url: '/api/v1/hooks',
          headers: key.auth,
          payload: { event: 'new_contact', target_url: TARGET },
        });
        expect(response.statusCode).toBe(500);
        expect(response.body).toBe('{"error":"internal"}');
      } finally {
        await brokenApp.close();
        await broken.cleanup();
      }
    });
  });
});
