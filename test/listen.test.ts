import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { launch, launchWeb, type LaunchedProcess } from '../kit/processes.js';
import { waitUntil } from '../kit/waiting.js';
import { createPostgresDatabase } from './support/databases.js';
import { redisForTest, withPostgresAndRedis } from './support/processes.js';

/**
 * `contact-hooks listen` as a developer runs it: the built CLI beside a real server, which
 * delivers over HTTPS to the receiver listen serves on 127.0.0.1 with the certificate it made.
 * No test certificate is given to the service (no NODE_EXTRA_CA_CERTS): its trust in listen's
 * receiver comes from DATA_DIR alone.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const started: LaunchedProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(started.map((service) => service.stop('SIGKILL')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-listen-'));
  dirs.push(dir);
  return join(dir, 'data');
};

type Web = Awaited<ReturnType<typeof launchWeb>>;

async function startWeb(env: Record<string, string>) {
  const web = await launchWeb({ LOG_LEVEL: 'warn', ...env }, { cwd: root });
  started.push(web);
  return web;
}

/** Runs the CLI to its end: `keys create --quiet` prints the key alone. */
async function newKey(env: Record<string, string>, account = 'acme') {
  const run = launch(
    'bin/contact-hooks.js',
    { LOG_LEVEL: 'warn', ...env },
    { args: ['keys', 'create', '--account', account, '--quiet'], cwd: root, endsByItself: true },
  );
  expect(await run.exited).toBe(0);
  return run.stdout().trim();
}

/** `contact-hooks listen` once it has subscribed (its "Ready" line). */
async function startListen(env: Record<string, string>, args: string[]) {
  const listen = launch('bin/contact-hooks.js', { LOG_LEVEL: 'warn', ...env }, { args: ['listen', ...args], cwd: root, label: 'listen' });
  started.push(listen);
  await waitUntil(
    () => !listen.alive() || listen.stderr().includes('Ready:'),
    20_000,
    () => listen.output(),
  );
  expect(listen.alive()).toBe(true);
  const url = /Ready: listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(listen.stderr())![1]!;
  return { ...listen, url };
}

const api = (web: Web, key: string) => async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${web.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string; webhook_id: string; signature: string; body: { event: string; data: Record<string, unknown> } });

describe('contact-hooks listen, beside an embedded development server', () => {
  it('subscribes with the key, prints each delivery with its signature verified, and unsubscribes on SIGINT', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });
    const key = await newKey({ DATA_DIR });
    const listen = await startListen({ DATA_DIR }, ['--key', key, '--events', 'new_contact,missed_call', '--json']);

    const hooks = (await api(web, key)('GET', '/hooks')).body.hooks as { id: string; event_type: string; target_url: string }[];
    expect(hooks.map((hook) => [hook.event_type, hook.target_url])).toStrictEqual([
      ['new_contact', `${listen.url}/new_contact`],
      ['missed_call', `${listen.url}/missed_call`],
    ]);
    // The certificate listen serves is the one it left in DATA_DIR for the service.
    const [certificateFile] = readdirSync(join(DATA_DIR, 'listen'));
    const certificate = new X509Certificate(readFileSync(join(DATA_DIR, 'listen', certificateFile!)));
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');

    const upserted = await api(web, key)('POST', '/contacts', { phone: '+1 415 555 0100', name: 'Ann' });
    expect(upserted.body.action).toBe('inserted');
    const internal = await fetch(`${web.url}/internal/v1/accounts/acme/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readFileSync(join(DATA_DIR, 'internal-api-token'), 'utf8').trim()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'voice', outcome: 'voicemail', spam: false, caller_name: 'Dee', caller_number: '+14155550103', summary: 'Call me back' }),
    });
    expect(internal.status).toBe(202);

    await waitUntil(
      () => jsonLines(listen.stdout()).length === 2,
      15_000,
      () => listen.output(),
    );
    // Two subscriptions are two targets, delivered side by side: either may print first.
    const deliveries = jsonLines(listen.stdout()).sort((a, b) => b.event.localeCompare(a.event));
    expect(deliveries.map((delivery) => [delivery.event, delivery.signature])).toStrictEqual([
      ['new_contact', 'verified'],
      ['missed_call', 'verified'],
    ]);
    expect(deliveries[0]!.body).toStrictEqual({
      event: 'new_contact',
      data: { contact_id: upserted.body.contact_id, name: 'Ann', phone: '+14155550100', source: 'api' },
    });
    expect(deliveries[1]!.body.data).toMatchObject({ caller_name: 'Dee', summary: 'Call me back' });
    // Listen answered 200, so the service records both as delivered (a moment after listen printed them).
    const statuses = async () =>
      Promise.all(
        hooks.map(async (hook) => {
          const log = await api(web, key)('GET', `/hooks/${hook.id}/deliveries`);
          return (log.body.deliveries as { status: string }[]).map((delivery) => delivery.status);
        }),
      );
    await waitUntil(async () => (await statuses()).every((each) => each.length === 1 && each[0] !== 'sending'), 5_000);
    expect(await statuses()).toStrictEqual(hooks.map(() => ['delivered']));

    expect(await listen.stop('SIGINT')).toBe(0);
    expect((await api(web, key)('GET', '/hooks')).body.hooks).toStrictEqual([]);
    expect(readdirSync(join(DATA_DIR, 'listen'))).toStrictEqual([]);
    expect(listen.stderr()).toMatch(/Unsubscribed new_contact/);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('refuses a POST whose signature does not check out (400) and says so; stops by itself after --exit-after deliveries', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });
    const key = await newKey({ DATA_DIR });
    const listen = await startListen({ DATA_DIR }, ['--key', key, '--events', 'new_contact', '--exit-after', '1']);
    const [certificateFile] = readdirSync(join(DATA_DIR, 'listen'));
    const ca = readFileSync(join(DATA_DIR, 'listen', certificateFile!), 'utf8');

    // Signed with another secret: as a forger would.
    const body = JSON.stringify({ event: 'new_contact', data: { contact_id: 'forged' } });
    const headers = { 'webhook-id': 'forged-1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const signature = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign(headers['webhook-id'], new Date(), body);
    const status = await new Promise<number>((resolve, reject) => {
      const post = request(
        `${listen.url}/new_contact`,
        { method: 'POST', ca, headers: { ...headers, 'webhook-signature': signature, 'content-type': 'application/json' } },
        (response) => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      post.on('error', reject).end(body);
    });
    expect(status).toBe(400);
    // listen answers, then prints: its line may reach this process a moment after the answer.
    await waitUntil(
      () => /new_contact {2}forged-1 {2}signature NOT verified \(mismatch\)/.test(listen.stdout()),
      5_000,
      () => listen.output(),
    );
    expect(listen.alive()).toBe(true);

    await api(web, key)('POST', '/contacts', { phone: '+1 415 555 0111', name: 'Bo' });
    expect(await listen.exited).toBe(0);
    expect(listen.stdout()).toMatch(/new_contact {2}[0-9a-f-]{36} {2}signature verified {2}\{"event":"new_contact","data":\{.*"name":"Bo"/);
    expect((await api(web, key)('GET', '/hooks')).body.hooks).toStrictEqual([]);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('explains a delivery the service refused because the SSRF guard is on (the default), and still unsubscribes on SIGTERM', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR });
    const refused = launch(
      'bin/contact-hooks.js',
      { DATA_DIR },
      { args: ['listen', '--key', 'chk_not-a-key', '--events', 'new_contact'], cwd: root, endsByItself: true },
    );
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/refused the key \(401\)/);
    expect(readdirSync(join(DATA_DIR, 'listen'))).toStrictEqual([]);

    const key = await newKey({ DATA_DIR });
    const listen = await startListen({ DATA_DIR }, ['--key', key, '--events', 'new_contact']);
    await api(web, key)('POST', '/contacts', { phone: '+1 415 555 0122' });
    await waitUntil(
      () => listen.stderr().includes('did not arrive'),
      15_000,
      () => listen.output(),
    );
    expect(listen.stderr()).toMatch(/did not arrive: refused \(private_address\)\. .*DELIVERY_ALLOW_PRIVATE_NETWORKS=true/);
    expect(listen.stdout()).toBe('');
    expect(await listen.stop('SIGTERM')).toBe(0);
    expect((await api(web, key)('GET', '/hooks')).body.hooks).toStrictEqual([]);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('is not trusted by a service on another DATA_DIR: the delivery fails with tls_error, and listen says why', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' });
    const key = await newKey({ DATA_DIR });
    const listen = await startListen({ DATA_DIR: dataDir() }, ['--key', key, '--events', 'new_contact', '--server', web.url]);
    await api(web, key)('POST', '/contacts', { phone: '+1 415 555 0133' });
    await waitUntil(
      () => listen.stderr().includes('did not arrive'),
      15_000,
      () => listen.output(),
    );
    expect(listen.stderr()).toMatch(/did not arrive: failed \(tls_error\)\. .*same DATA_DIR/);
    expect(listen.stdout()).toBe('');
    expect(await listen.stop('SIGINT')).toBe(0);
    expect(await web.stop('SIGTERM')).toBe(0);
  });
});

describe.runIf(withPostgresAndRedis)('contact-hooks listen, beside web and a worker on PostgreSQL and Redis', () => {
  it('is trusted by the worker that delivers, through the DATA_DIR they share', async () => {
    const database = await createPostgresDatabase();
    const redis = redisForTest();
    try {
      const DATA_DIR = dataDir();
      const env = { DATABASE_URL: database.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true', DATA_DIR };
      const web = await startWeb({ ...env, INTERNAL_API_TOKEN: 'listen-test-internal-token-0123' });
      const worker = launch('dist/src/main/worker.js', { LOG_LEVEL: 'warn', ...env }, { cwd: root, label: 'worker' });
      started.push(worker);
      const key = await newKey({ DATABASE_URL: database.url, DATA_DIR });
      const listen = await startListen({ DATA_DIR }, ['--key', key, '--events', 'new_contact', '--json', '--server', web.url]);
      await api(web, key)('POST', '/contacts', { phone: '+1 415 555 0144', name: 'Cy' });
      await waitUntil(
        () => jsonLines(listen.stdout()).length === 1,
        20_000,
        () => `${listen.output()}\n${worker.output()}`,
      );
      expect(jsonLines(listen.stdout())[0]).toMatchObject({ event: 'new_contact', signature: 'verified', body: { data: { name: 'Cy' } } });
      expect(await listen.stop('SIGINT')).toBe(0);
      expect((await api(web, key)('GET', '/hooks')).body.hooks).toStrictEqual([]);
      expect(await worker.stop('SIGTERM')).toBe(0);
      expect(await web.stop('SIGTERM')).toBe(0);
    } finally {
      await redis.cleanup();
      await database.drop();
    }
  });
});
