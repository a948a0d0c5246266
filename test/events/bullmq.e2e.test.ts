import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { createPostgresDatabase } from '../support/databases.js';
import { redisForTest, sleep, startProcess, startWeb, stopAllProcesses, waitUntil, type ServiceProcess } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * The production shape: a web process that only produces, separate worker processes, Redis and
 * PostgreSQL. The at-most-once guarantee is checked under the faults that break naive queues.
 */
describe('delivery through BullMQ with separate workers', () => {
  const redis = redisForTest();
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let receiver: Receiver;
  let web: Awaited<ReturnType<typeof startWeb>>;
  let http: ReturnType<typeof client>;
  let api: ReturnType<ReturnType<typeof client>['api']>;
  let env: Record<string, string>;
  const workers: ServiceProcess[] = [];
  const delayMs: Record<string, number> = {};
  let phone = 4155551000;

  const startWorker = () => {
    const worker = startProcess('worker', env);
    workers.push(worker);
    return worker;
  };
  const received = (path: string) => receiver.requests.filter((request) => request.path === path);
  /** How many POSTs each (event, target) got; at most once means every count is 1. */
  const countsPerDelivery = (path: string) => {
    const counts = new Map<string, number>();
    for (const request of received(path)) {
      const id = String(request.headers['webhook-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };
  const subscribe = async (path: string) => {
    const created = await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}${path}` });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const newContacts = async (count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const upserted = await api('POST', '/contacts', { phone: `+1${phone++}` });
      expect(upserted.body.action).toBe('inserted');
      ids.push(upserted.body.contact_id);
    }
    return ids;
  };
  const sql = async (text: string, params: unknown[] = []) => {
    const connection = new pg.Client({ connectionString: database.url });
    await connection.connect();
    try {
      return (await connection.query(text, params)).rows;
    } finally {
      await connection.end();
    }
  };

  beforeAll(async () => {
    database = await createPostgresDatabase();
    receiver = await startReceiver({ respond: (request) => ({ delayMs: delayMs[request.path] ?? 0 }) });
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      WORKER_LOCK_MS: '2000',
      SHUTDOWN_GRACE_MS: '8000',
    };
    web = await startWeb(env);
    http = client(web.url);
    api = http.api(await http.newKey('acme'));
    startWorker();
    startWorker();
  });

  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    await redis.cleanup();
    await database?.drop();
  });

  it('delivers every event once to every subscription, across two workers', async () => {
    await subscribe('/a');
    await subscribe('/b');
    await newContacts(40);
    await waitUntil(() => received('/a').length === 40 && received('/b').length === 40, 20_000);
    await sleep(500);
    for (const path of ['/a', '/b']) {
      const counts = countsPerDelivery(path);
      expect(counts.size).toBe(40);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
    }
    const jobs = await sql("SELECT count(*)::int AS n FROM deliveries WHERE status = 'delivered'");
    expect(jobs[0].n).toBe(80);
    await api('DELETE', `/hooks/${(await api('GET', '/hooks')).body.hooks[0].id}`);
    await api('DELETE', `/hooks/${(await api('GET', '/hooks')).body.hooks[0].id}`);
  });

  it('sends once when the same event is enqueued again under another job id, while and after it runs', async () => {
    await subscribe('/twice');
    delayMs['/twice'] = 500;
    const [contactId] = await newContacts(1);
    const [event] = await sql("SELECT id FROM events WHERE data->>'contact_id' = $1", [contactId]);
    const queue = new Queue('events', { connection: new Redis(redis.url), prefix: redis.prefix });
    try {
      await queue.add('deliver-event', { eventId: event.id }, { jobId: `${event.id}-again-1` });
      await waitUntil(() => received('/twice').length === 1, 10_000);
      await queue.add('deliver-event', { eventId: event.id }, { jobId: `${event.id}-again-2` });
      await sleep(1500);
      expect(received('/twice')).toHaveLength(1);
    } finally {
      await queue.close();
    }
    await api('DELETE', `/hooks/${(await api('GET', '/hooks')).body.hooks[0].id}`);
  });

  it('never sends twice when a worker is killed mid-delivery and its jobs stall', async () => {
    await subscribe('/killed');
    delayMs['/killed'] = 1500;
    await newContacts(20);
    await waitUntil(() => received('/killed').length >= 3, 10_000);
    for (const worker of workers.splice(0)) await worker.stop('SIGKILL');
    const replacement = startWorker();
    // The killed workers' locks expire (WORKER_LOCK_MS) and the replacement runs the stalled jobs again.
    await sleep(7000);
    const counts = countsPerDelivery('/killed');
    const duplicates = [...counts.values()].filter((count) => count > 1).length;
    const lost = 20 - counts.size;
    console.info(`SIGKILL: delivered ${counts.size}, lost ${lost}, duplicated ${duplicates}`);
    expect(duplicates).toBe(0);
    const claimed = await sql(
      `SELECT count(*)::int AS n FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/killed'`,
    );
    expect(claimed[0].n).toBeGreaterThanOrEqual(counts.size);
    expect(replacement.child.exitCode).toBeNull();
    startWorker();
    await api('DELETE', `/hooks/${(await api('GET', '/hooks')).body.hooks[0].id}`);
  });

  it('never sends twice when a frozen worker loses its lock and another worker takes the stalled job', async () => {
    await subscribe('/frozen');
    delayMs['/frozen'] = 800;
    const [victim] = workers;
    await newContacts(10);
    await waitUntil(() => received('/frozen').length >= 1, 10_000);
    victim!.child.kill('SIGSTOP'); // like an event loop blocked past lockDuration
    await sleep(6000);
    victim!.child.kill('SIGCONT');
    await sleep(3000);
    const counts = countsPerDelivery('/frozen');
    console.info(`stalled: delivered ${counts.size} of 10, duplicated ${[...counts.values()].filter((c) => c > 1).length}`);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    await api('DELETE', `/hooks/${(await api('GET', '/hooks')).body.hooks[0].id}`);
  });

  it('sends nothing to a subscription deleted while its event waits in the queue', async () => {
    const id = await subscribe('/unsubscribed');
    for (const worker of workers.splice(0)) await worker.stop('SIGTERM');
    await newContacts(3);
    expect((await api('DELETE', `/hooks/${id}`)).body).toStrictEqual({ ok: true });
    startWorker();
    await waitUntil(async () => (await sql('SELECT count(*)::int AS n FROM events WHERE relayed_at IS NULL'))[0].n === 0, 10_000);
    await sleep(500);
    expect(received('/unsubscribed')).toHaveLength(0);
  });

  it('finishes in-flight deliveries on SIGTERM and exits 0', async () => {
    await subscribe('/graceful');
    delayMs['/graceful'] = 1000;
    await newContacts(3);
    await waitUntil(() => received('/graceful').length >= 1, 10_000);
    const stopping = workers.splice(0);
    const codes = await Promise.all(stopping.map((worker) => worker.stop('SIGTERM')));
    expect(codes).toStrictEqual(stopping.map(() => 0));
    const outcomes = await sql(
      `SELECT d.status FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/graceful'`,
    );
    expect(outcomes.length).toBeGreaterThanOrEqual(1);
    expect(outcomes.every((row) => row.status === 'delivered')).toBe(true);
    startWorker();
    await waitUntil(() => received('/graceful').length === 3, 10_000);
  });

  it('serves Bull Board at /admin/queues to the internal token only', async () => {
    expect((await fetch(`${web.url}/admin/queues`)).status).toBe(401);
    const page = await fetch(`${web.url}/admin/queues`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    const basic = Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64');
    expect((await fetch(`${web.url}/admin/queues`, { headers: { authorization: `Basic ${basic}` } })).status).toBe(200);
  });

  it('reports readiness of storage and Redis, and queue depth in /metrics', async () => {
    expect(await (await fetch(`${web.url}/readyz`)).json()).toStrictEqual({ ok: true, storage: 'ok', queue: 'ok' });
    expect(await (await fetch(`${web.url}/metrics`)).text()).toMatch(/event_queue_depth \d+/);
  });
});
