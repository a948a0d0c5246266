import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unknownKey } from '../../../test/support/http.js';
import { app, appError, rejection, run, startServiceAndReceiver, type ServiceAndReceiver } from './support.js';

/** The connection (API key and server URL) against a real service process. */
describe('Zapier authentication against the service', () => {
  let env: ServiceAndReceiver;

  beforeAll(async () => {
    env = await startServiceAndReceiver();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('tests the connection with GET /api/v1/me and labels it with the account and key source', async () => {
    const { keyId, authData } = await env.connect('acme');
    const me = await run(app.authentication.test, { authData });
    expect(me).toStrictEqual({ account_id: 'acme', key: { id: keyId, source: 'zapier', name: null, created_at: expect.any(String) } });
    expect(await run(app.authentication.connectionLabel, { authData, inputData: me })).toBe('acme (zapier)');
  });

  it('labels a named key by its name, and accepts a server URL with a trailing slash', async () => {
    const { authData } = await env.connect('globex', { source: 'zapier', name: 'Front desk Zaps' });
    const me = await run(app.authentication.test, { authData: { ...authData, base_url: `${authData.base_url}/` } });
    expect(await run(app.authentication.connectionLabel, { authData, inputData: me })).toBe('globex (Front desk Zaps)');
  });

  it('fails the test with a clear message for a key the service does not know', async () => {
    const error = appError(await rejection(run(app.authentication.test, { authData: { base_url: env.service.url, api_key: unknownKey } })));
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(error.message).toMatch(/did not accept this API key/);
  });

  it('fails the test for a revoked key, and a Zap run with it stops as expired auth', async () => {
    const { keyId, authData } = await env.connect('acme');
    expect((await env.http.internal('DELETE', `/keys/${keyId}`)).status).toBe(200);
    expect(appError(await rejection(run(app.authentication.test, { authData })))).toMatchObject({ code: 'unauthorized', status: 401 });

    const create = app.creates.create_or_update_contact.operation.perform;
    const expired = await rejection(run(create, { authData, inputData: { phone: '+14155550199' } }));
    expect(expired).toMatchObject({ name: 'ExpiredAuthError', message: expect.stringMatching(/Reconnect with a valid key/) });
    const subscribe = app.triggers.new_contact.operation.performSubscribe;
    expect(await rejection(run(subscribe, { authData, targetUrl: `${env.receiver.url}/revoked` }))).toMatchObject({ name: 'ExpiredAuthError' });
  });

  it('says so when the server URL has no contact-hooks API, or is not a web address', async () => {
    const { authData } = await env.connect('acme');
    const wrongPath = appError(await rejection(run(app.authentication.test, { authData: { ...authData, base_url: `${env.service.url}/hooks` } })));
    expect(wrongPath).toMatchObject({ code: 'not_found', status: 404, message: expect.stringMatching(/no contact-hooks API at this server URL/) });
    const notAUrl = appError(await rejection(run(app.authentication.test, { authData: { ...authData, base_url: 'hooks.example.com' } })));
    expect(notAUrl).toMatchObject({ code: 'invalid_base_url', status: 400, message: expect.stringMatching(/not a web address/) });
  });
});

/** A service whose per-key limit is two requests a minute, so the third is a 429. */
describe('Zapier throttling against the service', () => {
  let env: ServiceAndReceiver;

  beforeAll(async () => {
    env = await startServiceAndReceiver({ RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it("turns a 429 into Zapier's ThrottledError with the service's Retry-After as the delay", async () => {
    const { authData } = await env.connect('acme');
    const create = app.creates.create_or_update_contact.operation.perform;
    await run(create, { authData, inputData: { phone: '+14155550101' } });
    await run(create, { authData, inputData: { phone: '+14155550102' } });
    const throttled = await rejection(run(create, { authData, inputData: { phone: '+14155550103' } }));
    expect(throttled).toMatchObject({ name: 'ThrottledError' });
    const { message, delay } = JSON.parse((throttled as Error).message) as { message: string; delay: number };
    expect(Number.isInteger(delay) && delay > 0 && delay <= 60).toBe(true);
    expect(message).toBe(`contact-hooks is rate limiting this API key; Zapier retries in ${delay} seconds.`);

    // The delay is the service's own: its next answer names (about) the same wait.
    const direct = await fetch(`${env.service.url}/api/v1/me`, { headers: { authorization: `Bearer ${authData.api_key}` } });
    expect(direct.status).toBe(429);
    expect(Math.abs(Number(direct.headers.get('retry-after')) - delay)).toBeLessThanOrEqual(1);
  });
});
