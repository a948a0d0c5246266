import { describe, expect, it } from 'vitest';
import { hashPortalToken } from '../../src/domain/portal.js';
import { runMaintenancePass } from '../../src/workers/maintenance.js';
import { INTERNAL_TOKEN } from '../support/app.js';
import { engines } from '../support/databases.js';
import { count, ISO_UTC, newAccount } from '../support/http.js';
import { mintLink, portalClient, signedIn, usePortalApp } from './support.js';

const HOUR_MS = 3_600_000;
const endSessions = (baseUrl: string, accountId: string) =>
  fetch(`${baseUrl}/internal/v1/accounts/${accountId}/portal-sessions`, { method: 'DELETE', headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });

/** Portal sessions over HTTP: minted by the platform, opened once by a link, ended at once. */
describe.each(engines())('portal sessions on %s', (engine) => {
  const t = usePortalApp(engine);

  it('mints a single-use link on the origin the request came to, for an hour unless asked otherwise', async () => {
    const accountId = newAccount();
    const before = Date.now();
    const link = await mintLink(t.url, accountId, {});
    expect(link.status).toBe(201);
    expect(Object.keys(link.body).sort()).toStrictEqual(['expires_at', 'url']);
    expect(link.body.url).toMatch(new RegExp(`^${t.url}/portal/open/[A-Za-z0-9_-]{43}$`));
    expect(link.body.expires_at).toMatch(ISO_UTC);
    const lifetime = Date.parse(link.body.expires_at) - before;
    expect(lifetime).toBeGreaterThan(HOUR_MS - 60_000);
    expect(lifetime).toBeLessThan(HOUR_MS + 60_000);

    const week = await mintLink(t.url, accountId, { capabilities: ['read'], expires_in: 7 * 86_400 });
    expect(Date.parse(week.body.expires_at) - before).toBeGreaterThan(7 * 24 * HOUR_MS - 60_000);
    // Only the link's hash is stored: the token in the URL is nowhere in the database.
    const token = link.body.url.split('/').at(-1)!;
    expect(await count(t.db, 'portal_sessions WHERE link_hash = $1 OR session_hash = $1', [token])).toBe(0);
  });

  it.each([
    [{ capabilities: ['admin'] }, 'invalid_capabilities'],
    [{ capabilities: [] }, 'invalid_capabilities'],
    [{ capabilities: 'read' }, 'invalid_capabilities'],
    [{ capabilities: null }, 'invalid_capabilities'],
    [{ expires_in: 0 }, 'invalid_expires_in'],
    [{ expires_in: 59 }, 'invalid_expires_in'],
    [{ expires_in: 7 * 86_400 + 1 }, 'invalid_expires_in'],
    [{ expires_in: 90.5 }, 'invalid_expires_in'],
    [{ expires_in: '3600' }, 'invalid_expires_in'],
  ])('refuses %j with 400 and mints nothing', async (body, code) => {
    const accountId = newAccount();
    const refused = await mintLink(t.url, accountId, body);
    expect({ status: refused.status, body: refused.body }).toStrictEqual({ status: 400, body: { error: code } });
    expect(await count(t.db, 'portal_sessions WHERE account_id = $1', [accountId])).toBe(0);
  });

  it('opens a link once: a cookie for the session (HttpOnly, SameSite=Lax, the portal only), then a redirect home', async () => {
    const client = portalClient(t.url);
    const link = await mintLink(t.url, newAccount());
    // A HEAD (a link checker's) spends nothing: it finds no such route.
    expect((await fetch(link.body.url, { method: 'HEAD', redirect: 'manual' })).status).toBe(404);
    const opened = await client.open(link.body.url);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/portal');
    const cookie = opened.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^portal_session=[A-Za-z0-9_-]{43}; Path=\/portal; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect((await client.get('/portal')).status).toBe(200);

    const again = await portalClient(t.url).open(link.body.url);
    expect(again.status).toBe(410);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    expect(again.text).toContain('This link was used already');
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('answers an expired link 410, and a link it never made 404, each with a page that says so', async () => {
    const link = await mintLink(t.url, newAccount(), { expires_in: 60 });
    const token = link.body.url.split('/').at(-1)!;
    await t.db.query(`UPDATE portal_sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE link_hash = $1`, [hashPortalToken(token)]);
    const expired = await portalClient(t.url).open(link.body.url);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain('This link has expired');

    for (const never of [`${'A'.repeat(43)}`, 'short', `${token}x`]) {
      const unknown = await portalClient(t.url).get(`/portal/open/${never}`);
      expect(unknown.status).toBe(404);
      expect(unknown.text).toContain('Not found');
    }
  });

  it('ends every session of the account at once, opened or not, and no other account’s', async () => {
    const accountId = newAccount();
    const signed = await signedIn(t.url, accountId);
    const pending = await mintLink(t.url, accountId);
    const other = await signedIn(t.url, newAccount());

    const ended = await endSessions(t.url, accountId);
    expect({ status: ended.status, body: await ended.json() }).toStrictEqual({ status: 200, body: { ok: true } });
    const refused = await signed.get('/portal');
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('You are not signed in');
    expect((await portalClient(t.url).open(pending.body.url)).status).toBe(404);
    expect((await other.get('/portal')).status).toBe(200);
  });

  it('refuses a session past its time with 401, and maintenance prunes it', async () => {
    const accountId = newAccount();
    const client = await signedIn(t.url, accountId);
    await t.db.query(`UPDATE portal_sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE account_id = $1`, [accountId]);
    expect((await client.get('/portal')).status).toBe(401);

    const settings = { retentionMs: 30 * 86_400_000, stuckAfterMs: 60_000, maxWaitMs: 86_400_000, disableRule: { afterMs: 1, minFailures: 1 }, pauseMs: 0 };
    const { changed } = await runMaintenancePass(t.store, settings);
    expect(changed.portalSessions).toBeGreaterThanOrEqual(1);
    expect(await count(t.db, 'portal_sessions WHERE account_id = $1', [accountId])).toBe(0);
  });

  it('refuses every page without a session, 401 with a page that says how to get one', async () => {
    const stranger = portalClient(t.url);
    for (const path of ['/portal', '/portal/events', `/portal/hooks/${crypto.randomUUID()}`, `/portal/deliveries/${crypto.randomUUID()}`]) {
      const answer = await stranger.get(path);
      expect(answer.status, path).toBe(401);
      expect(answer.text).toContain('Ask for a new link');
    }
    expect((await stranger.post(`/portal/keys/${crypto.randomUUID()}/revoke`, { csrf: 'x' })).status).toBe(401);
  });
});

describe('portal links with PUBLIC_BASE_URL', () => {
  const t = usePortalApp('pglite', { PUBLIC_BASE_URL: 'https://hooks.example.com/' });

  it('are made on PUBLIC_BASE_URL, and their cookie is Secure there', async () => {
    const link = await mintLink(t.url, newAccount());
    expect(link.body.url).toMatch(/^https:\/\/hooks\.example\.com\/portal\/open\/[A-Za-z0-9_-]{43}$/);
    const opened = await portalClient(t.url).get(new URL(link.body.url).pathname);
    expect(opened.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
  });
});
