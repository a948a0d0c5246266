import { describe, expect, it } from 'vitest';
import { issueKey } from '../support/app.js';
import { engines } from '../support/databases.js';
import { bearer, expectError, internalAuth, ISO_UTC, newAccount, unknownKey, useTestApp } from '../support/http.js';

describe.each(engines())('GET /api/v1/me on %s', (engine) => {
  const t = useTestApp(engine);

  const me = (authorization?: string) => t.app.inject({ method: 'GET', url: '/api/v1/me', headers: authorization ? { authorization } : {} });

  it('answers 200 {account_id, key: {id, source, name, created_at}} and never the secret', async () => {
    const accountId = newAccount();
    const issued = await issueKey(t.store, accountId, { source: 'zapier', name: 'Zapier – main' });
    const response = await me(`Bearer ${issued.key}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toStrictEqual({
      account_id: accountId,
      key: { id: issued.id, source: 'zapier', name: 'Zapier – main', created_at: issued.created_at },
    });
    expect(response.json().key.created_at).toMatch(ISO_UTC);
    expect(response.body).not.toContain(issued.key);
  });

  it('answers name null for a key issued without one', async () => {
    const issued = await issueKey(t.store, newAccount(), {});
    expect((await me(`Bearer ${issued.key}`)).json().key).toMatchObject({ source: 'api', name: null });
  });

  it.each([
    ['no key', undefined],
    ['an unknown key', `Bearer ${unknownKey}`],
    ['a malformed key', 'Bearer chk_short'],
    ['the internal token', internalAuth.authorization],
  ])('answers 401 unauthorized for %s', async (_why, authorization) => {
    expectError(await me(authorization), 401, 'unauthorized');
  });

  it('answers 401 unauthorized at once after the key is revoked', async () => {
    const issued = await issueKey(t.store, newAccount(), {});
    expect((await me(bearer(issued.key).authorization)).statusCode).toBe(200);
    await t.app.inject({ method: 'DELETE', url: `/internal/v1/keys/${issued.id}`, headers: internalAuth });
    expectError(await me(bearer(issued.key).authorization), 401, 'unauthorized');
  });
});
