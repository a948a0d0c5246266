import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { UUID } from '../support/http.js';
import { startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { n8nMissing, startN8n, type N8n } from './n8n.js';

type Item = Record<string, unknown>;

/** What n8n's public API lists of one execution, with its data. */
interface Execution {
  id: string;
  status: string;
  data: { resultData: { runData: Record<string, { data?: { main?: { json: Item }[][] } }[]> } };
}

/** Under CI a missing n8n fails every test of the suite; elsewhere the suite says why it skipped. */
const missing = n8nMissing();
if (missing && !process.env.CI) console.warn(`n8n suite skipped: ${missing}`);

/**
 * The community nodes of integrations/n8n inside a real n8n, against the service as a real
 * process: the webhook trigger subscribes on activation, runs on a live delivery and refuses a
 * badly signed POST, and unsubscribes on deactivation; the polling trigger reads the events
 * feed; the action upserts a contact. Workflows are created and (de)activated through n8n's
 * public API, as a user's automation would.
 */
describe.skipIf(missing !== undefined && !process.env.CI)('n8n nodes in a real n8n against the service', () => {
  let n8n: N8n;
  let service: Awaited<ReturnType<typeof startWeb>>;
  let dataDir: string;
  type Api = ReturnType<ReturnType<typeof client>['api']>;
  let http: ReturnType<typeof client>;
  let api: Api;
  let internal: ReturnType<typeof client>['internal'];
  let credential: { id: string; name: string };
  let key: string;
  let phone = 4155550300;

  /** What stopped the setup; every test then fails with it (a failed beforeAll would only mark them skipped). */
  let setupFailure: Error | undefined;

  beforeAll(async () => {
    try {
      if (missing) throw new Error(`n8n cannot run: ${missing}`);
      dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-n8n-service-'));
      // The service delivers to n8n on 127.0.0.1 (a private address, allowed for tests) and trusts the test certificate n8n serves.
      const [startedService, startedN8n] = await Promise.allSettled([
        startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' }),
        startN8n(),
      ]);
      if (startedN8n.status === 'fulfilled') n8n = startedN8n.value;
      if (startedService.status === 'rejected') throw startedService.reason;
      if (startedN8n.status === 'rejected') throw startedN8n.reason;
      service = startedService.value;
      http = client(service.url);
      internal = http.internal;
      key = await http.newKey('acme', 'n8n');
      api = http.api(key);
      const created = await n8n.api('POST', '/credentials', { name: 'contact-hooks', type: 'contactHooksApi', data: { baseUrl: service.url, apiKey: key } });
      if (created.status !== 200) throw new Error(`n8n refused the credential: ${JSON.stringify(created.body)}`);
      credential = { id: created.body.id, name: created.body.name };
    } catch (error) {
      setupFailure = error instanceof Error ? error : new Error(String(error));
    }
  }, 180_000);

  beforeEach(() => {
    if (setupFailure) throw setupFailure;
  });

  afterAll(async () => {
    await n8n?.stop();
    await stopAllProcesses();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const nextPhone = () => `+1${phone++}`;

  /** Creates a workflow through n8n's public API; returns its id. */
  const createWorkflow = async (name: string, nodes: Item[], connections: Item = {}) => {
    const created = await n8n.api('POST', '/workflows', { name, nodes, connections, settings: { executionOrder: 'v1' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.id as string;
  };
  /**
   * Publishes or unpublishes a workflow. n8n answers at once and (de)activates its triggers
   * shortly after, from an outbox; a caller waits for what it expects to see.
   */
  const setActive = async (workflowId: string, active: boolean) => {
    const answer = await n8n.api('POST', `/workflows/${workflowId}/${active ? 'activate' : 'deactivate'}`);
    expect(answer.status, `${JSON.stringify(answer.body)}\n${n8n.output().slice(-3000)}`).toBe(200);
  };
  /** Waits until n8n has started the triggers of an activated workflow (its trigger count is set then). */
  const waitUntilListening = (workflowId: string) =>
    waitUntil(
      async () => ((await n8n.api('GET', `/workflows/${workflowId}`)).body.triggerCount as number) > 0,
      20_000,
      () => `workflow ${workflowId} was not activated\n${n8n.output().slice(-3000)}`,
    );
  /** The service's subscriptions to a target URL, once `settled` holds for them (n8n (un)subscribes shortly after answering). */
  const hooksAt = async (url: string, settled: (found: Item[]) => boolean, keyApi = api) => {
    let found: Item[] = [];
    await waitUntil(
      async () => settled((found = (await hooks(keyApi)).filter((hook) => hook.target_url === url))),
      20_000,
      () => `subscriptions to ${url}: ${JSON.stringify(found)}\n${n8n.output().slice(-3000)}`,
    );
    return found;
  };
  /** The workflow's finished executions, oldest first, each as the items its first node put out. */
  const executions = async (workflowId: string, nodeName: string) => {
    const listed = await n8n.api('GET', `/executions?workflowId=${workflowId}&includeData=true&limit=100`);
    expect(listed.status).toBe(200);
    return (listed.body.data as Execution[])
      .filter((execution) => execution.status === 'success')
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((execution) => (execution.data.resultData.runData[nodeName]?.[0]?.data?.main?.[0] ?? []).map((item) => item.json));
  };
  const waitForExecutions = async (workflowId: string, nodeName: string, count: number, timeoutMs = 30_000) => {
    let found: Item[][] = [];
    await waitUntil(
      async () => (found = await executions(workflowId, nodeName)).length >= count,
      timeoutMs,
      () => `${found.length} of ${count} executions of ${workflowId}\n${n8n.output().slice(-3000)}`,
    );
    return found;
  };
  const hooks = async (keyApi = api) => (await keyApi('GET', '/hooks')).body.hooks as Item[];

  const webhookTrigger = (event: string, contactHooksApi = credential) => {
    const webhookId = randomUUID();
    return {
      webhookId,
      url: `${n8n.url}/webhook/${webhookId}/webhook`,
      node: {
        id: randomUUID(),
        name: 'Contact Hooks Trigger',
        type: 'CUSTOM.contactHooksTrigger',
        typeVersion: 1,
        position: [0, 0],
        webhookId,
        parameters: { event },
        credentials: { contactHooksApi },
      },
    };
  };

  it("credential: n8n's test asks the service who the key is, and fails for a key it does not know", async () => {
    // What the editor's Test button sends: the credential's id and the values in the form (here with a trailing slash).
    const test = async (apiKey: string) => {
      const data = { baseUrl: `${service.url}/`, apiKey };
      return (await n8n.rest('POST', '/credentials/test', { credentials: { ...credential, type: 'contactHooksApi', data } })).body.data;
    };
    expect(await test(key)).toMatchObject({ status: 'OK' });
    expect(await test('chk_not-a-key-this-service-issued')).toMatchObject({ status: 'Error', message: expect.stringMatching(/unauthorized/i) });
  });

  it('webhook trigger: activation subscribes, a new contact runs the workflow with it, deactivation unsubscribes', async () => {
    const trigger = webhookTrigger('new_contact');
    const workflowId = await createWorkflow('new contacts (webhook)', [trigger.node]);

    await setActive(workflowId, true);
    const subscribed = await hooksAt(trigger.url, (found) => found.length > 0);
    expect(subscribed).toEqual([expect.objectContaining({ event_type: 'new_contact', state: 'active' })]);

    const contactPhone = nextPhone();
    const upserted = await api('POST', '/contacts', { phone: contactPhone, name: 'Ann Lee', email: 'ann@example.com' });
    expect(upserted.body.action).toBe('inserted');
    const [items] = await waitForExecutions(workflowId, 'Contact Hooks Trigger', 1);
    expect(items).toStrictEqual([
      {
        contact_id: upserted.body.contact_id,
        name: 'Ann Lee',
        phone: contactPhone,
        source: 'n8n',
        event: 'new_contact',
        event_id: expect.stringMatching(UUID),
      },
    ]);
    const log = await api('GET', `/hooks/${String(subscribed[0]!.id)}/deliveries`);
    expect(log.body.deliveries).toEqual([expect.objectContaining({ status: 'delivered', response_status: 200, event_id: items![0]!.event_id })]);

    await setActive(workflowId, false);
    expect(await hooksAt(trigger.url, (found) => found.length === 0)).toEqual([]);
  });

  it('webhook trigger: a POST without a valid signature is answered 401 and starts no execution', async () => {
    const trigger = webhookTrigger('new_contact');
    const workflowId = await createWorkflow('new contacts (refused)', [trigger.node]);
    await setActive(workflowId, true);
    try {
      await hooksAt(trigger.url, (found) => found.length > 0);
      const body = JSON.stringify({ event: 'new_contact', data: { contact_id: randomUUID(), name: 'Mallory', phone: '+14155550999', source: 'api' } });
      const id = randomUUID();
      const timestamp = String(Math.floor(Date.now() / 1000));
      // Signed as the service signs, but with a secret that is not the subscription's.
      const wrongKey = randomBytes(24);
      const forged = `v1,${createHmac('sha256', wrongKey).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
      const attempts: Record<string, string>[] = [
        { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': forged },
        {},
        { 'webhook-id': id, 'webhook-timestamp': String(Number(timestamp) - 3600), 'webhook-signature': forged },
      ];
      for (const headers of attempts) {
        const answer = await n8n.request('POST', new URL(trigger.url).pathname, body, { 'content-type': 'application/json', ...headers });
        expect(answer.status, answer.body).toBe(401);
      }
      // A run would have been saved by now; none was.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await executions(workflowId, 'Contact Hooks Trigger')).toEqual([]);
      const listed = await n8n.api('GET', `/executions?workflowId=${workflowId}`);
      expect(listed.body.data).toEqual([]);
    } finally {
      await setActive(workflowId, false);
    }
  });

  it('webhook trigger: with its key rotated, deactivating keeps the subscription, and reactivating with the new key reuses it', async () => {
    // A key of its own, so rotating it leaves the other tests' key alone.
    const issued = await internal('POST', '/accounts/acme/keys', { source: 'n8n' });
    const created = await n8n.api('POST', '/credentials', {
      name: 'rotated',
      type: 'contactHooksApi',
      data: { baseUrl: service.url, apiKey: issued.body.key },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const trigger = webhookTrigger('new_contact', { id: created.body.id, name: created.body.name });
    const workflowId = await createWorkflow('new contacts (rotated key)', [trigger.node]);
    await setActive(workflowId, true);
    const keyApi = http.api(issued.body.key);
    const [subscription] = await hooksAt(trigger.url, (found) => found.length > 0, keyApi);

    const rotated = await internal('POST', `/keys/${String(issued.body.id)}/rotate`);
    const rotatedApi = http.api(rotated.body.key);
    await setActive(workflowId, false);
    // The old secret is refused, so n8n cannot unsubscribe; it deactivates all the same, and says so.
    await waitUntil(
      () => n8n.output().includes(`could not unsubscribe ${String(subscription!.id)}`),
      20_000,
      () => n8n.output().slice(-3000),
    );
    expect((await hooks(rotatedApi)).map((hook) => hook.id)).toContain(subscription!.id);

    const updated = await n8n.api('PATCH', `/credentials/${String(created.body.id)}`, { data: { baseUrl: service.url, apiKey: rotated.body.key } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    await setActive(workflowId, true);
    try {
      // n8n listens again once the trigger's URL answers (401: an unsigned POST starts nothing).
      const path = new URL(trigger.url).pathname;
      await waitUntil(async () => (await n8n.request('POST', path, '{}', { 'content-type': 'application/json' })).status === 401, 20_000);
      // The subscription and its secret are reused: the next delivery verifies and runs the workflow.
      const upserted = await rotatedApi('POST', '/contacts', { phone: nextPhone(), name: 'After Rotation' });
      const [items] = await waitForExecutions(workflowId, 'Contact Hooks Trigger', 1);
      expect(items).toStrictEqual([expect.objectContaining({ contact_id: upserted.body.contact_id, name: 'After Rotation' })]);
      expect((await hooks(rotatedApi)).filter((hook) => hook.target_url === trigger.url).map((hook) => hook.id)).toStrictEqual([subscription!.id]);
    } finally {
      await setActive(workflowId, false);
    }
  });

  it('action: Create or Update Contact upserts the contact in the service', async () => {
    const path = randomUUID();
    const workflowId = await createWorkflow(
      'upsert a contact',
      [
        {
          id: randomUUID(),
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          webhookId: randomUUID(),
          parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', responseData: 'firstEntryJson' },
        },
        {
          id: randomUUID(),
          name: 'Contact Hooks',
          type: 'CUSTOM.contactHooks',
          typeVersion: 1,
          position: [200, 0],
          parameters: {
            resource: 'contact',
            operation: 'upsert',
            phone: '={{ $json.body.phone }}',
            additionalFields: { name: '={{ $json.body.name }}', email: '={{ $json.body.email }}' },
          },
          credentials: { contactHooksApi: credential },
        },
      ],
      { Webhook: { main: [[{ node: 'Contact Hooks', type: 'main', index: 0 }]] } },
    );
    await setActive(workflowId, true);
    try {
      await waitUntilListening(workflowId);
      const run = async (body: Item) => {
        const answer = await n8n.request('POST', `/webhook/${path}`, JSON.stringify(body), { 'content-type': 'application/json' });
        expect(answer.status, answer.body).toBe(200);
        return JSON.parse(answer.body) as Item;
      };
      const inserted = await run({ phone: '(415) 555-0399', name: 'Bo Diaz', email: 'bo@example.com' });
      expect(inserted).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID), reason: null });

      const stored = await internal('GET', `/accounts/acme/contacts/${String(inserted.contact_id)}`);
      expect(stored.status).toBe(200);
      expect(stored.body).toMatchObject({ contact_id: inserted.contact_id, phone: '+14155550399', name: 'Bo Diaz', email: 'bo@example.com', source: 'n8n' });

      expect(await run({ phone: '+1 415 555 0399', name: 'Bo Díaz' })).toStrictEqual({ action: 'updated', contact_id: inserted.contact_id, reason: null });
      expect(await run({ phone: '12', name: 'Nobody' })).toStrictEqual({ action: 'skipped', contact_id: null, reason: 'invalid_phone' });
    } finally {
      await setActive(workflowId, false);
    }
  });

  it('polling trigger: activation starts from now, and a later poll gives the events since, oldest first', async () => {
    const before = await api('POST', '/contacts', { phone: nextPhone(), name: 'Newest Before' });
    const feedReads = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('"route":"/api/v1/events"')).length;
    const readsBefore = feedReads();
    const workflowId = await createWorkflow('new contacts (polling)', [
      {
        id: randomUUID(),
        name: 'Contact Hooks Polling Trigger',
        type: 'CUSTOM.contactHooksPollingTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: { event: 'new_contact', pollTimes: { item: [{ mode: 'everyMinute' }] } },
        credentials: { contactHooksApi: credential },
      },
    ]);
    await setActive(workflowId, true);
    try {
      // n8n polls once on activation (the service logs its read of the feed), then every minute.
      await waitUntil(
        () => feedReads() > readsBefore,
        30_000,
        () => service.output().slice(-3000),
      );

      const created: string[] = [];
      for (const name of ['First After', 'Second After']) created.push((await api('POST', '/contacts', { phone: nextPhone(), name })).body.contact_id);
      // The next poll (or two, if a minute turned between the upserts) gives both, once each, oldest
      // first; the contact from before activation is in none.
      let since: Item[] = [];
      await waitUntil(
        async () => (since = (await executions(workflowId, 'Contact Hooks Polling Trigger')).flat()).length >= 2,
        75_000,
        () => `polled since the first: ${JSON.stringify(since)}\n${n8n.output().slice(-3000)}`,
      );
      expect(since.map((item) => item.contact_id)).toStrictEqual(created);
      expect(since.map((item) => item.name)).toStrictEqual(['First After', 'Second After']);
      expect(since.map((item) => item.contact_id)).not.toContain(before.body.contact_id);
    } finally {
      await setActive(workflowId, false);
    }
  }, 120_000);
});
