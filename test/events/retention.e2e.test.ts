import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/** Two seconds, as a fraction of a day. */
const RETENTION_DAYS = String(2 / 86_400);

/**
 * The embedded process runs the maintenance loop itself: with a tiny RETENTION_DAYS, events and
 * delivery logs it delivered disappear from the API within seconds, and contacts stay.
 */
describe('retention in the embedded process', () => {
  let receiver: Receiver;
  let service: Awaited<ReturnType<typeof startWeb>>;
  let dataDir: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-retention-'));
    service = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true', RETENTION_DAYS });
  });
  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prunes delivered events and their delivery log after RETENTION_DAYS, and keeps the contacts', async () => {
    const http = client(service.url);
    const api = http.api(await http.newKey('acme'));
    const hookId = (await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/contacts` })).body.id;
    const contacts: string[] = [];
    for (const phone of ['+14155550101', '+14155550102', '+14155550103']) contacts.push((await api('POST', '/contacts', { phone })).body.contact_id);
    await receiver.waitFor(3, 15_000);
    expect((await api('GET', '/events?event=new_contact&limit=10')).body.events).toHaveLength(3);

    await waitUntil(async () => (await api('GET', `/hooks/${hookId}/deliveries`)).body.deliveries.length === 0, 20_000);
    await waitUntil(async () => (await api('GET', '/events?event=new_contact&limit=10')).body.events.length === 0, 20_000);
    for (const contactId of contacts) expect((await http.internal('GET', `/accounts/acme/contacts/${contactId}`)).status).toBe(200);
    // The subscription itself is live and stays.
    expect((await api('GET', '/hooks')).body.hooks.map((hook: { id: string }) => hook.id)).toStrictEqual([hookId]);
  });
});
