import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/storage/pglite.js';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { freePort, startProcess, startWeb, stopAllProcesses } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const SECRETS_KEY = randomBytes(32).toString('base64');

/**
 * SECRETS_KEY on a real embedded server: a store that began without it, then restarted with
 * it. Every secret ends up sealed at rest, and deliveries signed with the sealed secrets verify
 * with the `standardwebhooks` package against the secrets the subscribers were given.
 */
describe('signing secrets encrypted at rest, end to end (embedded mode)', () => {
  let receiver: Receiver;
  let dataDir: string;
  const env = () => ({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });

  beforeAll(async () => {
    receiver = await startReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-secrets-'));
  });
  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('seals the secrets written before the key, and deliveries still verify with the secrets subscribers hold', async () => {
    const before = await startWeb(env());
    let http = client(before.url);
    const key = await http.newKey('acme');
    const earlier = (await http.api(key)('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/earlier` })).body;
    expect(await before.stop('SIGTERM')).toBe(0);

    const service = await startWeb({ ...env(), SECRETS_KEY });
    http = client(service.url);
    const api = http.api(key);
    const later = (await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/later` })).body;
    const inserted = await api('POST', '/contacts', { phone: '+14155550100', name: 'Ann' });
    await receiver.waitFor(2, 15_000);
    for (const [path, secret] of [
      ['/earlier', earlier.secret],
      ['/later', later.secret],
    ] as const) {
      const delivery = receiver.requests.find((request) => request.path === path)!;
      expect(new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).toStrictEqual({
        event: 'new_contact',
        data: { contact_id: inserted.body.contact_id, name: 'Ann', phone: '+14155550100', source: 'zapier' },
      });
    }
    expect(await service.stop('SIGTERM')).toBe(0);

    const db = await openPglite(dataDir);
    try {
      const { rows } = await db.query<{ secret: string }>('SELECT secret FROM hooks');
      expect(rows).toHaveLength(2);
      for (const { secret } of rows) {
        expect(secret).toMatch(/^enc:v1:/);
        expect([earlier.secret, later.secret].some((plain) => secret.includes(plain.slice(6)))).toBe(false);
      }
    } finally {
      await db.close();
    }
  });

  it('refuses to start without SECRETS_KEY once the secrets are sealed, saying why', async () => {
    const web = startProcess('web', { ...env(), HOST: '127.0.0.1', PORT: String(await freePort()) });
    expect(await web.exited).toBe(1);
    expect(web.output()).toMatch(/SECRETS_KEY/);
  });
});
