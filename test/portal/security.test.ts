import { describe, expect, it } from 'vitest';
import { csrfTokenOf } from '../../src/domain/portal.js';
import { engines } from '../support/databases.js';
import { snapshot } from '../support/http.js';
import { seededAccount, signedIn, usePortalApp, type Answer } from './support.js';

const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Every write the portal takes, for one account's hook and key. */
const writes = (hookId: string, keyId: string) => [
  `/portal/hooks/${hookId}/enable`,
  `/portal/hooks/${hookId}/test`,
  `/portal/hooks/${hookId}/unsubscribe`,
  `/portal/keys/${keyId}/rotate`,
  `/portal/keys/${keyId}/revoke`,
];

const expectPage = (answer: Answer, status: number, text: string) => {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
  expect(answer.text).toContain(text);
};

/** The portal's security rules, over HTTP against the app on real storage. */
describe.each(engines())('portal security on %s', (engine) => {
  const t = usePortalApp(engine);

  it('answers another account’s hook, key and delivery ids 404, and changes nothing of theirs', async () => {
    const mine = await seededAccount(t.store);
    const theirs = await seededAccount(t.store);
    await t.db.query(`UPDATE hooks SET state = 'disabled', disabled_reason = 'failing', disabled_at = now() WHERE id = $1`, [theirs.hookId]);
    const client = await signedIn(t.url, mine.accountId);
    const csrf = await client.csrf();
    for (const path of [
      `/portal/hooks/${theirs.hookId}`,
      `/portal/deliveries/${theirs.deliveryIds[0]}`,
      `/portal/hooks/${theirs.hookId}/unsubscribe`,
      `/portal/keys/${theirs.keyId}/revoke`,
    ]) {
      expectPage(await client.get(path), 404, 'Not found');
    }
    const before = await snapshot(t.db);
    for (const path of writes(theirs.hookId, theirs.keyId)) expectPage(await client.post(path, { csrf }), 404, 'Not found');
    expect(await snapshot(t.db)).toStrictEqual(before);
    // The same requests for the session's own ids are answered: the 404s are about the account.
    expect((await client.get(`/portal/hooks/${mine.hookId}`)).status).toBe(200);
    expect((await client.get(`/portal/deliveries/${mine.deliveryIds[0]}`)).status).toBe(200);
  });

  it('refuses a write without its session’s CSRF token (none, another session’s, garbage) with 403, changing nothing', async () => {
    const { accountId, hookId, keyId } = await seededAccount(t.store);
    await t.db.query(`UPDATE hooks SET state = 'disabled', disabled_reason = 'failing', disabled_at = now() WHERE id = $1`, [hookId]);
    const client = await signedIn(t.url, accountId);
    const otherSessionsToken = await (await signedIn(t.url, accountId)).csrf();
    const before = await snapshot(t.db);
    for (const path of writes(hookId, keyId)) {
      for (const form of [undefined, {}, { csrf: '' }, { csrf: otherSessionsToken }, { csrf: 'x'.repeat(43) }] as Array<Record<string, string> | undefined>) {
        expectPage(await client.post(path, form), 403, 'Not allowed');
      }
    }
    expect(await snapshot(t.db)).toStrictEqual(before);
    expect(await t.store.deliveries.page({ hookId }, { limit: 100 }).then((page) => page.rows.length)).toBe(2);
  });

  it('shows a read session no control, and refuses its writes with 403 even with its CSRF token', async () => {
    const { accountId, hookId, keyId, deliveryIds } = await seededAccount(t.store);
    await t.db.query(`UPDATE hooks SET state = 'disabled', disabled_reason = 'failing', disabled_at = now() WHERE id = $1`, [hookId]);
    const reader = await signedIn(t.url, accountId, ['read']);
    for (const path of ['/portal', `/portal/hooks/${hookId}`, `/portal/deliveries/${deliveryIds[0]}`, '/portal/events']) {
      const answer = await reader.get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.text, path).not.toMatch(/method="post"|Enable|Unsubscribe|Rotate|Revoke|Send a test/);
      expect(answer.text).toContain('View only');
    }
    expectPage(await reader.get(`/portal/keys/${keyId}/revoke`), 403, 'Not allowed');
    expectPage(await reader.get(`/portal/hooks/${hookId}/unsubscribe`), 403, 'Not allowed');
    // The manager's pages of the same account do show them, so the test above looks at the right words.
    expect((await (await signedIn(t.url, accountId)).get('/portal')).text).toMatch(/Enable new_contact/);
    // A read session's pages carry no form; its token is still derived from its cookie, as a manager's is.
    const readersToken = csrfTokenOf(reader.sessionToken()!);
    const before = await snapshot(t.db);
    for (const path of writes(hookId, keyId)) expectPage(await reader.post(path, { csrf: readersToken }), 403, 'Not allowed');
    expect(await snapshot(t.db)).toStrictEqual(before);
  });

  it('sends its strict CSP and refuses framing on every answer: pages, files, refusals', async () => {
    const { accountId } = await seededAccount(t.store);
    const client = await signedIn(t.url, accountId);
    for (const answer of [
      await client.get('/portal'),
      await client.get('/portal/assets/portal.css'),
      await client.get('/portal/assets/portal.js'),
      await client.get('/portal/nowhere'),
      await client.get(`/portal/hooks/not-an-id`),
      await client.post('/portal/hooks/x/enable', {}),
    ]) {
      expect(answer.headers.get('content-security-policy')).toBe(CSP);
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // The page loads nothing from another host: every src and href is the portal's own path.
    const home = (await client.get('/portal')).text;
    for (const [, url] of home.matchAll(/(?:src|href|action)="([^"]*)"/g)) expect(url).toMatch(/^(\/portal|#)/);
  });

  it('answers bad filters with 400 and malformed ids with 404, as pages, never a 5xx', async () => {
    const { accountId, hookId } = await seededAccount(t.store);
    const client = await signedIn(t.url, accountId);
    for (const query of ['status=nope', 'cursor=%%%', 'cursor=abc', 'event=party', 'range=1y']) {
      expectPage(await client.get(`/portal/hooks/${hookId}?${query}`), 400, 'not valid');
    }
    for (const path of ['/portal/hooks/x', '/portal/deliveries/x', '/portal/deliveries/00000000-0000-7000-8000-000000000000', '/portal/keys/x/revoke']) {
      expectPage(await client.get(path), 404, 'Not found');
    }
  });
});

describe('portal framing with PORTAL_FRAME_ANCESTORS', () => {
  const t = usePortalApp('pglite', { PORTAL_FRAME_ANCESTORS: 'https://app.example.com, https://*.example.org' });

  it('lets those origins frame it, and only them', async () => {
    const { accountId } = await seededAccount(t.store);
    const page = await (await signedIn(t.url, accountId)).get('/portal');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors https://app.example.com https://*.example.org; base-uri 'none'");
    expect(page.headers.get('x-frame-options')).toBeNull();
  });
});
