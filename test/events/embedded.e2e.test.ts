import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { EVENT_TYPES } from '../../src/domain/events.js';
import { client } from '../support/client.js';
import { dereferenced, schemaChecker, type Operation } from '../support/openapi.js';
import { sleep, startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * The embedded default, end to end: one real server process (PGlite, in-process queue) delivering
 * to a real HTTPS receiver on 127.0.0.1.
 */
describe('events and delivery, embedded mode', () => {
  let receiver: Receiver;
  let service: Awaited<ReturnType<typeof startWeb>>;
  let http: ReturnType<typeof client>;
  let dataDir: string;
  let key: string;
  let api: ReturnType<ReturnType<typeof client>['api']>;
  const secrets = new Map<string, string>();
  const status: Record<string, number> = {};

  const received = (path: string) => receiver.requests.filter((request) => request.path === path);
  const subscribe = async (event: string, path: string, as = api) => {
    const created = await as('POST', '/hooks', { event, target_url: `${receiver.url}${path}` });
    expect(created.status).toBe(201);
    secrets.set(path, created.body.secret);
    return created.body.id as string;
  };
  /** Lets in-flight deliveries land before asserting that something did not arrive. */
  const settle = () => sleep(400);

  beforeAll(async () => {
    receiver = await startReceiver({ respond: (request) => ({ status: status[request.path] ?? 200 }) });
    dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-e2e-'));
    service = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });
    http = client(service.url);
    key = await http.newKey('acme', 'zapier');
    api = http.api(key);
  });

  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers new_contact on insert, signed, with the exact envelope, and never on update', async () => {
    await subscribe('new_contact', '/contacts');
    const inserted = await api('POST', '/contacts', { phone: '+1 415 555 0101', name: 'Ann' });
    expect(inserted.body.action).toBe('inserted');
    await receiver.waitFor(1);
    const [delivery] = received('/contacts');
    expect(delivery!.method).toBe('POST');
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(delivery!.body)).toStrictEqual({
      event: 'new_contact',
      data: { contact_id: inserted.body.contact_id, name: 'Ann', phone: '+14155550101', source: 'zapier' },
    });
    const verified = new Webhook(secrets.get('/contacts')!).verify(delivery!.body, delivery!.headers as Record<string, string>);
    expect(verified).toStrictEqual(JSON.parse(delivery!.body));
    expect(() => new Webhook(secrets.get('/contacts')!).verify(delivery!.body.replace('Ann', 'Bob'), delivery!.headers as Record<string, string>)).toThrow();

    expect((await api('POST', '/contacts', { phone: '415-555-0101', name: 'Ann B' })).body.action).toBe('updated');
    await settle();
    expect(received('/contacts')).toHaveLength(1);
  });

  it('delivers new_contact for a CRM sync with the CRM as source', async () => {
    const before = received('/contacts').length;
    const synced = await http.internal('POST', '/accounts/acme/contacts/sync', { phone: '+14155550102', name: 'Cy', source: 'hubspot' });
    expect(synced.body.action).toBe('inserted');
    await receiver.waitFor(receiver.requests.length + 1);
    await waitUntil(() => received('/contacts').length === before + 1);
    expect(JSON.parse(received('/contacts').at(-1)!.body).data).toStrictEqual({
      contact_id: synced.body.contact_id,
      name: 'Cy',
      phone: '+14155550102',
      source: 'hubspot',
    });
  });

  it('fires new_conversation for an answered call and both events for voicemail, once per conversation', async () => {
    await subscribe('new_conversation', '/conversations');
    await subscribe('missed_call', '/missed');
    const call = { channel: 'voice', spam: false, caller_name: 'Dee', caller_number: '(415) 555-0103', summary: 'Asked about hours' };

    const answered = await http.internal('POST', '/accounts/acme/calls', { ...call, outcome: 'answered' });
    expect(answered.status).toBe(202);
    expect(answered.body.events).toStrictEqual(['new_conversation']);
    const voicemail = await http.internal('POST', '/accounts/acme/calls', { ...call, outcome: 'voicemail' });
    expect(voicemail.body.events).toStrictEqual(['new_conversation', 'missed_call']);
    await waitUntil(() => received('/conversations').length === 2 && received('/missed').length === 1);

    const data = JSON.parse(received('/missed')[0]!.body);
    expect(data).toStrictEqual({
      event: 'missed_call',
      data: {
        conversation_id: voicemail.body.conversation_id,
        channel: 'voice',
        caller_name: 'Dee',
        caller_number: '+14155550103',
        summary: 'Asked about hours',
      },
    });

    const again = await http.internal('POST', '/accounts/acme/calls', {
      ...call,
      outcome: 'voicemail',
      conversation_id: voicemail.body.conversation_id,
    });
    expect(again).toStrictEqual({ status: 202, body: { conversation_id: voicemail.body.conversation_id, events: [] } });
    await settle();
    expect(received('/conversations')).toHaveLength(2);
    expect(received('/missed')).toHaveLength(1);
  });

  it('fires nothing for spam, immediate hang-ups, texts and chats', async () => {
    const before = receiver.requests.length;
    const base = { caller_name: 'Eve', caller_number: '+14155550104', summary: '' };
    for (const call of [
      { channel: 'voice', outcome: 'answered', spam: true },
      { channel: 'voice', outcome: 'hangup', spam: false },
      { channel: 'sms', outcome: 'answered', spam: false },
      { channel: 'chat', outcome: 'voicemail', spam: false },
    ]) {
      const reported = await http.internal('POST', '/accounts/acme/calls', { ...base, ...call });
      expect(reported.status).toBe(202);
      expect(reported.body.events).toStrictEqual([]);
    }
    await settle();
    expect(receiver.requests).toHaveLength(before);
  });

  it('rejects a bad call report with 400 and fires nothing', async () => {
    const before = receiver.requests.length;
    const bad = await http.internal('POST', '/accounts/acme/calls', { channel: 'voice', outcome: 'answered', spam: 'no' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toStrictEqual(['error']);
    const badNumber = await http.internal('POST', '/accounts/acme/calls', {
      channel: 'voice',
      outcome: 'answered',
      spam: false,
      caller_name: 'x',
      caller_number: 'not a number',
      summary: '',
    });
    expect(badNumber).toStrictEqual({ status: 400, body: { error: 'invalid_caller_number' } });
    await settle();
    expect(receiver.requests).toHaveLength(before);
  });

  it('serves recent events as sample data, newest first, for the key account only', async () => {
    const events = await api('GET', '/events?event=new_conversation&limit=1');
    expect(events.status).toBe(200);
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0].event).toBe('new_conversation');
    expect(events.body.events[0].data.summary).toBe('Asked about hours');
    const all = await api('GET', '/events?event=new_conversation');
    expect(all.body.events).toHaveLength(2);
    expect(Date.parse(all.body.events[0].created_at)).toBeGreaterThanOrEqual(Date.parse(all.body.events[1].created_at));

    const otherAccount = http.api(await http.newKey('other-account'));
    expect((await otherAccount('GET', '/events?event=new_conversation')).body.events).toStrictEqual([]);
    expect(await api('GET', '/events?event=bogus')).toStrictEqual({ status: 400, body: { error: 'invalid_event' } });
  });

  it('does not deliver to another account’s subscriptions', async () => {
    const otherApi = http.api(await http.newKey('third-account'));
    await subscribe('new_contact', '/third', otherApi);
    await api('POST', '/contacts', { phone: '+14155550105' });
    await waitUntil(() => received('/contacts').length === 3);
    await settle();
    expect(received('/third')).toHaveLength(0);
  });

  it('drops a subscription whose target answers 410 Gone', async () => {
    const id = await subscribe('new_contact', '/gone');
    status['/gone'] = 410;
    await api('POST', '/contacts', { phone: '+14155550106' });
    await waitUntil(() => received('/gone').length === 1);
    await waitUntil(async () => !(await api('GET', '/hooks')).body.hooks.some((hook: { id: string }) => hook.id === id));
    await api('POST', '/contacts', { phone: '+14155550107' });
    await waitUntil(() => received('/contacts').length === 5);
    await settle();
    expect(received('/gone')).toHaveLength(1);
  });

  it('records each attempt in the delivery log, newest first, and sends nothing after unsubscribe', async () => {
    const id = await subscribe('new_contact', '/log');
    status['/log'] = 500;
    await api('POST', '/contacts', { phone: '+14155550108' });
    await waitUntil(() => received('/log').length === 1);
    await waitUntil(async () => (await api('GET', `/hooks/${id}/deliveries`)).body.deliveries[0]?.status === 'failed');
    const log = await api('GET', `/hooks/${id}/deliveries`);
    expect(log.body.deliveries).toHaveLength(1);
    expect(log.body.deliveries[0]).toMatchObject({ event: 'new_contact', status: 'failed', response_status: 500, error: null });
    expect(log.body.deliveries[0].duration_ms).toBeGreaterThanOrEqual(0);
    await sleep(600); // the failed POST is not retried
    expect(received('/log')).toHaveLength(1);

    expect((await api('DELETE', `/hooks/${id}`)).body).toStrictEqual({ ok: true });
    await api('POST', '/contacts', { phone: '+14155550109' });
    await waitUntil(() => received('/contacts').length === 7);
    await settle();
    expect(received('/log')).toHaveLength(1);
  });

  it('exposes deliveries by outcome, their latency, queue depth and HTTP durations in /metrics', async () => {
    const metrics = await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(metrics).toMatch(/webhook_delivery_duration_seconds_count [1-9]/);
    expect(metrics).toMatch(/event_queue_depth \d+/);
    expect(metrics).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/contacts",status="200"\} [1-9]/);
  });

  it('sends nothing to the hooks of a revoked key', async () => {
    const revocable = await http.call('POST', '/internal/v1/accounts/acme/keys', INTERNAL_TOKEN, { source: 'make' });
    await subscribe('new_contact', '/revoked', http.api(revocable.body.key));
    expect((await http.internal('DELETE', `/keys/${revocable.body.id}`)).body).toStrictEqual({ ok: true });
    await api('POST', '/contacts', { phone: '+14155550110' });
    await waitUntil(() => received('/contacts').length === 8);
    await settle();
    expect(received('/revoked')).toHaveLength(0);
  });

  it('sends bodies and headers that the webhooks of its own public document describe', async () => {
    const document = await dereferenced(await (await fetch(`${service.url}/api/v1/openapi.json`)).json());
    const check = schemaChecker();
    const events = new Set<string>();
    for (const request of receiver.requests) {
      const body = JSON.parse(request.body);
      const described = (document.webhooks?.[body.event] as { post?: Operation } | undefined)?.post;
      expect(described, request.body).toBeDefined();
      const media = (described!.requestBody as { content: Record<string, { schema: object }> }).content['application/json']!;
      expect(check(media.schema, body), request.body).toStrictEqual([]);
      for (const header of described!.parameters as Array<{ name: string; schema: object }>) {
        expect(check(header.schema, request.headers[header.name]), `${header.name}: ${String(request.headers[header.name])}`).toStrictEqual([]);
      }
      events.add(body.event);
    }
    expect([...events].sort()).toStrictEqual([...EVENT_TYPES].sort());
  });
});

describe('SSRF protection with DELIVERY_ALLOW_PRIVATE_NETWORKS off', () => {
  it('refuses to deliver to a loopback target and records the refusal', async () => {
    const receiver = await startReceiver();
    const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-ssrf-'));
    try {
      const service = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN });
      const http = client(service.url);
      const api = http.api(await http.newKey('acme'));
      const targets = [`${receiver.url}/a`, `https://localhost:${receiver.port}/b`, `https://[::1]:${receiver.port}/c`];
      const ids: string[] = [];
      for (const target_url of targets) ids.push((await api('POST', '/hooks', { event: 'new_contact', target_url })).body.id);
      await api('POST', '/contacts', { phone: '+14155550111' });
      for (const id of ids) {
        await waitUntil(async () => ['refused', 'failed', 'delivered'].includes((await api('GET', `/hooks/${id}/deliveries`)).body.deliveries[0]?.status));
        const [attempt] = (await api('GET', `/hooks/${id}/deliveries`)).body.deliveries;
        expect(attempt).toMatchObject({ status: 'refused', error: 'private_address', response_status: null });
      }
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await stopAllProcesses();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
