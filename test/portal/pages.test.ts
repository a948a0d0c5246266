import { describe, expect, it } from 'vitest';
import { runMaintenancePass } from '../../src/workers/maintenance.js';
import { engines } from '../support/databases.js';
import { bearer, count } from '../support/http.js';
import { seededAccount, signedIn, usePortalApp } from './support.js';
import { testServices } from '../support/app.js';

const rowsOf = (page: string) => [...page.matchAll(/href="\/portal\/deliveries\/([0-9a-f-]{36})"/g)].map((match) => match[1]);

/** What the portal's pages show and what its writes do, over HTTP against the app on real storage. */
describe.each(engines())('portal pages on %s', (engine) => {
  const t = usePortalApp(engine);

  it('home lists each key with its source, name, times, and its hooks with state, last 24 h and last outcomes', async () => {
    const { accountId, hookId } = await seededAccount(t.store, ['delivered', 'failed', 'failed']);
    await t.db.query(`UPDATE hooks SET state = 'disabled', disabled_reason = 'failing', disabled_at = now(), skipped = 4 WHERE id = $1`, [hookId]);
    const home = (await (await signedIn(t.url, accountId)).get('/portal')).text;
    expect(home).toContain('<dt>Source</dt><dd>api</dd>');
    expect(home).toMatch(/<dt>Last used<\/dt><dd>never<\/dd>/);
    expect(home).toContain('new_contact → hooks.example.com');
    expect(home).toContain('<span class="badge bad">disabled</span>');
    expect(home).toContain('4 events not sent since');
    expect(home).toContain('<dt>Last 24 hours</dt><dd>1 delivered, 2 failed</dd>');
    expect(home).toMatch(/<dt>Last delivered<\/dt><dd><time datetime="[^"]+Z">/);
  });

  it('notes a key’s last use on a request that succeeded, not on one refused', async () => {
    const accountId = `acct-${crypto.randomUUID()}`;
    const key = await testServices(t.store).keys.issue(accountId, {});
    const lastUsed = async () => (await t.db.query<{ at: Date | null }>('SELECT last_used_at AS at FROM api_keys WHERE id = $1', [key.id])).rows[0]!.at;
    await fetch(`${t.url}/api/v1/hooks/${crypto.randomUUID()}`, { headers: bearer(key.key) });
    expect(await lastUsed()).toBeNull();
    await fetch(`${t.url}/api/v1/hooks`, { headers: bearer(key.key) });
    expect(await lastUsed()).toBeInstanceOf(Date);
  });

  it('a hook page charts a week of outcomes, and filters its log by status, event type and time, paged by cursor', async () => {
    const outcomes = Array.from({ length: 7 }, (_, i) => (i % 2 === 0 ? 'failed' : 'delivered'));
    const { accountId, hookId, deliveryIds } = await seededAccount(t.store, outcomes);
    // Six days ago, kept by retention (8 days), drawn in the week's chart but not in the 24 hours'.
    await t.db.query(
      `INSERT INTO hook_outcome_hours (hook_id, hour, status, count) VALUES ($1, date_trunc('hour', now()) - interval '6 days', 'unknown', 9),
      ($1, date_trunc('hour', now()) - interval '9 days', 'unknown', 5)`,
      [hookId],
    );
    const settings = {
      retentionMs: 30 * 86_400_000,
      stuckAfterMs: 3_600_000,
      maxWaitMs: 86_400_000,
      disableRule: { afterMs: 86_400_000, minFailures: 1000 },
      pauseMs: 0,
    };
    await runMaintenancePass(t.store, settings);
    expect(await count(t.db, 'hook_outcome_hours WHERE hook_id = $1', [hookId])).toBe(3);

    const client = await signedIn(t.url, accountId);
    const page = (await client.get(`/portal/hooks/${hookId}`)).text;
    expect(page).toContain('<desc id="hours-desc">In all: 3 delivered, 4 failed.</desc>');
    expect(page).toContain('<desc id="days-desc">In all: 3 delivered, 4 failed, 9 unknown.</desc>');
    expect(page).toMatch(/<ul class="legend" aria-label="Legend">[\s\S]*delivered[\s\S]*failed[\s\S]*refused[\s\S]*expired[\s\S]*unknown/);
    expect(rowsOf(page)).toStrictEqual([...deliveryIds].reverse());

    const failed = deliveryIds.filter((_, i) => outcomes[i] === 'failed').reverse();
    expect(rowsOf((await client.get(`/portal/hooks/${hookId}?status=failed`)).text)).toStrictEqual(failed);
    expect(rowsOf((await client.get(`/portal/hooks/${hookId}?event=new_contact&range=1h`)).text)).toHaveLength(7);
    expect((await client.get(`/portal/hooks/${hookId}?event=missed_call`)).text).toContain('No deliveries match.');
    await t.db.query(`UPDATE deliveries SET queued_at = queued_at - interval '2 hours' WHERE id = $1`, [deliveryIds[0]]);
    expect(rowsOf((await client.get(`/portal/hooks/${hookId}?range=1h`)).text)).toHaveLength(6);

    // Paging by the API's cursor, two rows a page (25 unless asked), the filters kept.
    const first = (await client.get(`/portal/hooks/${hookId}?status=failed&limit=2`)).text;
    const next = /href="(\/portal\/hooks\/[^"]+cursor=[^"]+)"/.exec(first)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toContain('status=failed');
    expect(rowsOf((await client.get(next!)).text)).toStrictEqual(failed.slice(2));
  });

  it('a delivery page shows the envelope as sent, the headers without the secret, and the outcome', async () => {
    const { accountId, deliveryIds } = await seededAccount(t.store, ['failed']);
    const page = (await (await signedIn(t.url, accountId)).get(`/portal/deliveries/${deliveryIds[0]}`)).text;
    const { rows } = await t.db.query<{ event_id: string; data: string; secret: string }>(
      'SELECT e.id AS event_id, e.data::text AS data, h.secret FROM deliveries d JOIN events e ON e.id = d.event_id JOIN hooks h ON h.id = d.hook_id WHERE d.id = $1',
      [deliveryIds[0]],
    );
    const { event_id, data, secret } = rows[0]!;
    const body = /<pre class="code"[^>]*>([\s\S]*?)<\/pre>/.exec(page)![1]!.replaceAll('&quot;', '"');
    expect(JSON.parse(body)).toStrictEqual({ event: 'new_contact', data: JSON.parse(data) });
    expect(page).toContain(`<code>webhook-id</code></th><td class="wrap"><code>${event_id}</code>`);
    expect(page).toContain('<dt>Response status</dt><dd>500</dd>');
    expect(page).toContain('<dt>Duration</dt><dd>7 ms</dd>');
    expect(page).not.toContain(secret);
    expect(page).not.toContain(secret.slice('whsec_'.length));
  });

  it('manage writes: enable, unsubscribe, rotate (the new secret shown once) and revoke (after a confirmation naming its hooks)', async () => {
    const { accountId, hookId, keyId } = await seededAccount(t.store, []);
    await t.db.query(`UPDATE hooks SET state = 'disabled', disabled_reason = 'failing', disabled_at = now() WHERE id = $1`, [hookId]);
    const client = await signedIn(t.url, accountId);
    const csrf = await client.csrf();

    expect((await client.post(`/portal/hooks/${hookId}/enable`, { csrf })).headers.get('location')).toBe(`/portal/hooks/${hookId}?done=enabled`);
    expect((await t.store.hooks.findForAccount(accountId, hookId))?.state).toBe('active');

    const rotated = await client.post(`/portal/keys/${keyId}/rotate`, { csrf });
    const secret = /id="secret" class="secret" type="text" readonly value="(chk_[^"]+)"/.exec(rotated.text)?.[1];
    expect((await fetch(`${t.url}/api/v1/hooks`, { headers: bearer(secret!) })).status).toBe(200);
    expect((await client.get('/portal')).text).not.toContain(secret);

    const confirm = await client.get(`/portal/keys/${keyId}/revoke`);
    expect(confirm.text).toContain('Its 1 subscription will be deleted');
    expect(confirm.text).toContain('<li>new_contact → hooks.example.com</li>');
    expect(await count(t.db, 'api_keys WHERE id = $1 AND revoked_at IS NOT NULL', [keyId])).toBe(0);
    expect((await client.post(`/portal/keys/${keyId}/revoke`, { csrf })).headers.get('location')).toBe('/portal?done=revoked');
    expect((await fetch(`${t.url}/api/v1/hooks`, { headers: bearer(secret!) })).status).toBe(401);
    expect(await t.store.hooks.findForAccount(accountId, hookId)).toBeUndefined();

    const second = await seededAccount(t.store, []);
    const manager = await signedIn(t.url, second.accountId);
    expect((await manager.get(`/portal/hooks/${second.hookId}/unsubscribe`)).text).toContain('It will get no more events');
    await manager.post(`/portal/hooks/${second.hookId}/unsubscribe`, { csrf: await manager.csrf() });
    expect(await t.store.hooks.findForAccount(second.accountId, second.hookId)).toBeUndefined();
  });
});
