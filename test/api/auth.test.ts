import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN, newKey } from '../support/app.js';
import { engines } from '../support/databases.js';
import { expectError, newAccount, openTestApp, snapshot, unknownKey, type TestApp } from '../support/http.js';

const TARGET = 'https://hooks.example.com/receive';

describe.each(engines())('API key authentication on %s', (engine) => {
  let t: TestApp;
  let app: FastifyInstance;
  let liveKey: string;
  let revokedKey: string;
  let hookId: string;

  beforeAll(async () => {
    t = await openTestApp(engine);
    app = t.app;
    const accountId = newAccount();
    const live = await newKey(t.store, accountId);
    liveKey = live.key;
    const created = await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: live.auth, payload: { event: 'new_contact', target_url: TARGET } });
    hookId = created.json().id;
    await app.inject({ method: 'POST', url: '/api/v1/contacts', headers: live.auth, payload: { phone: '+14155550100', name: 'Ann' } });

    const revoked = await newKey(t.store, accountId);
    revokedKey = revoked.key;
    await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: revoked.auth, payload: { event: 'missed_call', target_url: TARGET } });
    // Through the first-party API, as the platform revokes: the process forgets the key at once.
    expect(
      (await app.inject({ method: 'DELETE', url: `/internal/v1/keys/${revoked.id}`, headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).statusCode,
    ).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Every /api/v1 route, with a request that a live key would get answered (and that would change things). */
  const routes: Array<[string, () => InjectOptions]> = [
    ['POST /api/v1/contacts', () => ({ method: 'POST', url: '/api/v1/contacts', payload: { phone: '+14155550199', name: 'Eve' } })],
    ['GET /api/v1/hooks', () => ({ method: 'GET', url: '/api/v1/hooks' })],
    ['POST /api/v1/hooks', () => ({ method: 'POST', url: '/api/v1/hooks', payload: { event: 'new_contact', target_url: TARGET } })],
    ['GET /api/v1/hooks/{id}/deliveries', () => ({ method: 'GET', url: `/api/v1/hooks/${hookId}/deliveries` })],
    ['DELETE /api/v1/hooks/{id}', () => ({ method: 'DELETE', url: `/api/v1/hooks/${hookId}` })],
    ['GET /api/v1/events', () => ({ method: 'GET', url: '/api/v1/events?event=new_contact' })],
  ];

  /** Authorization headers that must not get in; undefined is no header at all. */
  const credentials: Array<[string, () => string | undefined]> = [
    ['no Authorization header', () => undefined],
    ['an empty Authorization header', () => ''],
    ['the Basic scheme', () => `Basic ${liveKey}`],
    ['no scheme', () => liveKey],
    ['Bearer without a key', () => 'Bearer '],
    ['a malformed key', () => 'Bearer not-a-key'],
    ['a live key with a character more', () => `Bearer ${liveKey}x`],
    ['an unknown well-formed key', () => `Bearer ${unknownKey}`],
    ['a revoked key', () => `Bearer ${revokedKey}`],
    ['the internal token', () => `Bearer ${INTERNAL_TOKEN}`],
  ];

  const cases = routes.flatMap(([route, request]) => credentials.map(([why, header]) => [route, why, request, header] as const));

  it.each(cases)('%s with %s answers 401 unauthorized and changes nothing', async (_route, _why, request, header) => {
    const before = await snapshot(t.db);
    const authorization = header();
    const response = await app.inject({ ...request(), headers: authorization === undefined ? {} : { authorization } });
    expectError(response, 401, 'unauthorized');
    expect(await snapshot(t.db)).toStrictEqual(before);
  });

  // Runs after the refusals: it deletes the hook they tried to delete.
  it('lets the live key through on the same requests (the refusals above are about the key)', async () => {
    const auth = { authorization: `Bearer ${liveKey}` };
    const statuses = [];
    for (const [, request] of routes) statuses.push((await app.inject({ ...request(), headers: auth })).statusCode);
    expect(statuses).toStrictEqual([200, 200, 201, 200, 200, 200]);
  });

  it('checks the key before reading the body: malformed JSON without a key is 401', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/contacts',
      headers: { 'content-type': 'application/json' },
      payload: '{"phone":',
    });
    expectError(response, 401, 'unauthorized');
  });

  it('accepts the Bearer scheme in any case', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/hooks', headers: { authorization: `bearer ${liveKey}` } });
    expect(response.statusCode).toBe(200);
  });
});
