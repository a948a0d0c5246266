import { describe, expect, it } from 'vitest';
import { EVENT_EXAMPLES } from '../../src/domain/events.js';
import { storedHook, testServices } from '../support/app.js';
import { engines, fanOutOutbox } from '../support/databases.js';
import { count, internalAuth, newAccount, bearer } from '../support/http.js';
import { seededAccount, signedIn, usePortalApp } from './support.js';

/** Test events: one POST of the catalog's example, to one hook only, marked in the log, left out of the samples. */
describe.each(engines())('test events on %s', (engine) => {
  const t = usePortalApp(engine);

  it('record one event of the catalog example for that hook alone, enqueue its job, fan out to that hook only, and show test in both logs', async () => {
    const { accountId, hookId } = await seededAccount(t.store, []);
    const sibling = await storedHook(t.store, accountId, 'https://hooks.example.com/b');
    const enqueuedBefore = t.enqueued().length;
    const client = await signedIn(t.url, accountId);
    const sent = await client.post(`/portal/hooks/${hookId}/test`, { csrf: await client.csrf() });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/portal/hooks/${hookId}?done=test_sent`);

    const enqueued = t.enqueued().slice(enqueuedBefore);
    expect(enqueued).toStrictEqual([{ event_id: expect.any(String), event: 'new_contact', account_id: accountId, fired_at: expect.any(String) }]);
    const { rows } = await t.db.query<{ data: unknown; hook_id: string }>('SELECT data, hook_id FROM events WHERE account_id = $1', [accountId]);
    expect(rows).toStrictEqual([{ data: EVENT_EXAMPLES.new_contact, hook_id: hookId }]);
    // Its job's fan-out, as a worker runs it: one delivery, to the hook it names.
    const fanned = await fanOutOutbox(t.store, t.db);
    expect(fanned.map((delivery) => delivery.hookId)).toStrictEqual([hookId]);
    expect(await count(t.db, 'deliveries WHERE hook_id = $1', [sibling.hookId])).toBe(0);

    const internal = await fetch(`${t.url}/internal/v1/accounts/${accountId}/deliveries`, { headers: internalAuth }).then((r) => r.json());
    expect(internal.deliveries.map((d: { id: string; test: boolean }) => [d.id, d.test])).toStrictEqual([[fanned[0]!.id, true]]);
    const page = await client.get(`/portal/hooks/${hookId}?done=test_sent`);
    expect(page.text).toContain('A test event is on its way');
    expect(page.text).toMatch(/status-queued">queued<\/span> <span class="badge">test<\/span>/);
  });

  it('go to a disabled hook they name, which a real event skips', async () => {
    const { accountId, hookId } = await seededAccount(t.store, []);
    await t.db.query(`UPDATE hooks SET state = 'disabled' WHERE id = $1`, [hookId]);
    await testServices(t.store).hooks.sendTest(accountId, hookId);
    await testServices(t.store).contacts.sync(accountId, { phone: '+14155550199', source: 'crm' });
    const fanned = await fanOutOutbox(t.store, t.db);
    expect(fanned.filter((delivery) => delivery.accountId === accountId)).toHaveLength(1);
    const { rows } = await t.db.query<{ skipped: number }>('SELECT skipped FROM hooks WHERE id = $1', [hookId]);
    expect(rows[0]!.skipped).toBe(1);
  });

  it('are left out of the events sample list, and a real event beside them is not marked test', async () => {
    const accountId = newAccount();
    const key = await testServices(t.store).keys.issue(accountId, { source: 'zapier' });
    const hook = await fetch(`${t.url}/api/v1/hooks`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'new_contact', target_url: 'https://hooks.example.com/z' }),
    }).then((r) => r.json());
    await testServices(t.store).hooks.sendTest(accountId, hook.id);
    const contact = await fetch(`${t.url}/api/v1/contacts`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ phone: '+14155550111' }),
    }).then((r) => r.json());
    await fanOutOutbox(t.store, t.db);

    const samples = await fetch(`${t.url}/api/v1/events?event=new_contact&limit=10`, { headers: bearer(key.key) }).then((r) => r.json());
    expect(samples.events.map((event: { data: { contact_id: string } }) => event.data.contact_id)).toStrictEqual([contact.contact_id]);
    const log = await fetch(`${t.url}/api/v1/hooks/${hook.id}/deliveries`, { headers: bearer(key.key) }).then((r) => r.json());
    expect(log.deliveries.map((d: { test: boolean }) => d.test)).toStrictEqual([false, true]);
  });

  it('are sent only to the account’s live hooks: another account’s, an unsubscribed one, or one of a revoked key is not found', async () => {
    const services = testServices(t.store);
    const mine = await seededAccount(t.store, []);
    const theirs = await seededAccount(t.store, []);
    await expect(services.hooks.sendTest(mine.accountId, theirs.hookId)).rejects.toThrow('not_found');
    await services.hooks.unsubscribeForOwner(mine.accountId, mine.hookId);
    await expect(services.hooks.sendTest(mine.accountId, mine.hookId)).rejects.toThrow('not_found');
    const revoked = await storedHook(t.store, mine.accountId);
    await services.keys.revoke(revoked.keyId);
    await expect(services.hooks.sendTest(mine.accountId, revoked.hookId)).rejects.toThrow('not_found');
    expect(await count(t.db, 'events WHERE account_id = ANY($1)', [[mine.accountId, theirs.accountId]])).toBe(0);
  });
});
