import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../support/client.js';
import { startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { baseEnv } from './support.js';

/**
 * The embedded process killed while a paced backlog waits in its memory: on restart, the relay
 * restores every queued delivery and every event not fanned out from the database, so nothing
 * acknowledged is lost. The only deliveries that may be missing are ones claimed when it died.
 */
describe('the embedded process restarting with a paced backlog', () => {
  let receiver: Receiver;
  let dataDir: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-restart-'));
  });
  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers every acknowledged event after a SIGKILL, once', async () => {
    const env = { ...baseEnv, DATA_DIR: dataDir };
    const first = await startWeb(env);
    const key = await client(first.url).newKey('acme');
    const api = client(first.url).api(key);
    const created = await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/paced`, max_per_second: 4 });
    const hookId = created.body.id as string;
    for (let i = 0; i < 20; i++) expect((await api('POST', '/contacts', { phone: `+1415200${String(i).padStart(4, '0')}` })).status).toBe(200);
    await receiver.waitFor(3, 10_000);
    await first.stop('SIGKILL');
    const beforeRestart = receiver.requests.length;

    const second = await startWeb(env);
    const again = client(second.url).api(key);
    const log = async () => ((await again('GET', `/hooks/${hookId}/deliveries`)).body.deliveries as Array<{ event_id: string; status: string }>) ?? [];
    await waitUntil(async () => (await log()).length === 20 && (await log()).every((d) => d.status !== 'queued'), 30_000);
    await waitUntil(async () => receiver.requests.length + (await log()).filter((d) => d.status === 'sending').length >= 20, 10_000);

    const received = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = String(request.headers['webhook-id']);
      received.set(id, (received.get(id) ?? 0) + 1);
    }
    const missing = (await log()).filter((delivery) => !received.has(delivery.event_id));
    console.info(
      `[embedded restart] 20 acknowledged, ${beforeRestart} sent before the kill, ${received.size} received in all; ` +
        `missing ${missing.length} (claimed when killed: ${missing.filter((d) => d.status === 'sending').length})`,
    );
    expect([...received.values()].every((count) => count === 1)).toBe(true);
    expect(missing.filter((delivery) => delivery.status !== 'sending')).toStrictEqual([]);
    expect(received.size).toBeGreaterThan(beforeRestart);
  });
});
