import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { startWeb, stopAllProcesses } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Key rotation as an integration lives it, on a real embedded server delivering to a real HTTPS
 * receiver: after the rotation the old key is refused, and the subscription made with it keeps
 * receiving signed deliveries, for events caused through the new key and by the platform.
 */
describe('key rotation, end to end (embedded mode)', () => {
  let receiver: Receiver;
  let service: Awaited<ReturnType<typeof startWeb>>;
  let dataDir: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-rotation-'));
    service = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps delivering to the subscriptions of a rotated key, while the old secret answers 401', async () => {
    const http = client(service.url);
    const issued = await http.call('POST', '/internal/v1/accounts/acme/keys', INTERNAL_TOKEN, { source: 'zapier', name: 'Zap' });
    const oldApi = http.api(issued.body.key);
    const subscribed = await oldApi('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/contacts` });
    expect(subscribed.status).toBe(201);
    const { id: hookId, secret } = subscribed.body;

    const rotated = await http.internal('POST', `/keys/${issued.body.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: issued.body.id, account_id: 'acme', source: 'zapier', name: 'Zap' });
    const newApi = http.api(rotated.body.key);

    expect(await oldApi('POST', '/contacts', { phone: '+14155550100' })).toStrictEqual({ status: 401, body: { error: 'unauthorized' } });
    expect((await newApi('GET', '/hooks')).body.hooks.map((hook: { id: string }) => hook.id)).toStrictEqual([hookId]);

    const inserted = await newApi('POST', '/contacts', { phone: '+14155550101', name: 'Ann' });
    expect(inserted.body.action).toBe('inserted');
    await receiver.waitFor(1, 15_000);
    const [delivery] = receiver.requests;
    expect(delivery!.path).toBe('/contacts');
    const verified = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);
    expect(verified).toStrictEqual({
      event: 'new_contact',
      data: { contact_id: inserted.body.contact_id, name: 'Ann', phone: '+14155550101', source: 'zapier' },
    });

    const synced = await http.internal('POST', '/accounts/acme/contacts/sync', { phone: '+14155550102', name: 'Cy', source: 'hubspot' });
    expect(synced.body.action).toBe('inserted');
    await receiver.waitFor(2, 15_000);
    const second = receiver.requests[1]!;
    expect(new Webhook(secret).verify(second.body, second.headers as Record<string, string>)).toMatchObject({
      event: 'new_contact',
      data: { contact_id: synced.body.contact_id, source: 'hubspot' },
    });
  });
});
