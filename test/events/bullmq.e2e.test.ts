import { afterAll, beforeAll, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { startStack } from '../support/stack.js';
import { freePort, sleep, startProcess, waitUntil } from '../support/processes.js';
import { describeEachRedisShape } from '../support/redisShapes.js';
import { handoffKeyOf } from '../../src/queue/redisHandoff.js';

/**
 * The production shape: a web process that only produces, separate worker processes, Redis and
 * PostgreSQL; on one Redis server and on a Redis Cluster. Crash and stall faults are in
 * test/faults/workerFaults.test.ts.
 */
describeEachRedisShape('delivery through BullMQ with separate workers, Redis %s', (shape) => {
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'bullmq', redis: shape, workers: 2 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('delivers every event once to every subscription, across two workers', async () => {
    const hooks = [await stack.subscribe('/a'), await stack.subscribe('/b')];
    await stack.newContacts(40);
    await waitUntil(() => stack.received('/a').length === 40 && stack.received('/b').length === 40, 20_000);
    await sleep(500);
    for (const path of ['/a', '/b']) {
      const counts = stack.countsPerDelivery(path);
      expect(counts.size).toBe(40);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
    }
    const delivered = await stack.sql("SELECT count(*)::int AS n FROM deliveries WHERE status = 'delivered'");
    expect(delivered[0].n).toBe(80);
    for (const id of hooks) await stack.api('DELETE', `/hooks/${id}`);
  });

  it('commits each event fanned out with its cause, and hands its deliveries to a worker on Redis', async () => {
    const id = await stack.subscribe('/handed');
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGTERM');
    await stack.newContacts(3);
    // No worker runs, yet nothing waits in the outbox: the upserts' statements queued the deliveries.
    expect((await stack.sql('SELECT count(*)::int AS n FROM events WHERE dispatched_at IS NULL'))[0].n).toBe(0);
    const queued = await stack.sql(`SELECT d.id::text FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/handed' AND d.status = 'queued'`);
    expect(queued).toHaveLength(3);
    const redis = stack.redis!.client();
    try {
      const handed = (await redis.lrange(handoffKeyOf(stack.redis!.prefix), 0, -1)).map((entry) => JSON.parse(entry).delivery_id);
      expect(new Set(handed)).toStrictEqual(new Set(queued.map((row) => row.id)));
      stack.startWorker();
      await waitUntil(() => stack.received('/handed').length === 3, 10_000);
      expect(await redis.llen(handoffKeyOf(stack.redis!.prefix))).toBe(0);
    } finally {
      redis.disconnect();
    }
    await sleep(500);
    expect([...stack.countsPerDelivery('/handed').values()]).toStrictEqual([1, 1, 1]);
    await stack.api('DELETE', `/hooks/${id}`);
  });

  it('sends nothing to a subscription deleted while its deliveries wait for a worker', async () => {
    const id = await stack.subscribe('/unsubscribed');
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGTERM');
    await stack.newContacts(3);
    expect((await stack.api('DELETE', `/hooks/${id}`)).body).toStrictEqual({ ok: true });
    stack.startWorker();
    // The worker finds them unclaimable and drops them.
    await waitUntil(async () => (await stack.sql('SELECT count(*)::int AS n FROM deliveries WHERE hook_id = $1', [id]))[0].n === 0, 10_000);
    await sleep(500);
    expect(stack.received('/unsubscribed')).toHaveLength(0);
  });

  it('finishes in-flight deliveries on SIGTERM and exits 0', async () => {
    await stack.subscribe('/graceful');
    stack.delayMs['/graceful'] = 1000;
    await stack.newContacts(3);
    await waitUntil(() => stack.received('/graceful').length >= 1, 10_000);
    const stopping = stack.workers.splice(0);
    const codes = await Promise.all(stopping.map((worker) => worker.stop('SIGTERM')));
    expect(codes).toStrictEqual(stopping.map(() => 0));
    const outcomes = await stack.sql(
      `SELECT d.status FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/graceful'`,
    );
    // Every delivery a stopping worker had claimed was finished; the rest wait, queued, for the next worker.
    const claimed = outcomes.filter((row) => row.status !== 'queued');
    expect(claimed.length).toBeGreaterThanOrEqual(1);
    expect(claimed.every((row) => row.status === 'delivered')).toBe(true);
    stack.startWorker();
    await waitUntil(() => stack.received('/graceful').length === 3, 10_000);
  });

  it('serves a worker’s delivery metrics on WORKER_METRICS_PORT', async () => {
    const port = await freePort();
    const worker = startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' });
    for (const other of stack.workers.splice(0)) await other.stop('SIGTERM');
    stack.workers.push(worker);
    await stack.subscribe('/metered');
    await stack.newContacts(2);
    await waitUntil(() => stack.received('/metered').length === 2, 10_000);
    // The receiver has the POSTs a moment before the worker has their answers and counts them.
    const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text());
    await waitUntil(async () => /webhook_deliveries_total\{outcome="delivered"\} 2/.test(await metrics()), 5_000);
    expect(await metrics()).toMatch(/webhook_delivery_duration_seconds_count 2/);
  });

  it('drains in-flight requests on SIGTERM of the web process and exits 0', async () => {
    const answers = Array.from({ length: 20 }, (_, i) =>
      stack.api('POST', '/contacts', { phone: `+1415555${7000 + i}` }).then(
        (response) => response.status,
        () => 'not accepted' as const,
      ),
    );
    await sleep(5);
    const code = await stack.web.stop('SIGTERM');
    expect(code).toBe(0);
    // Every request the server accepted was answered in full; the closing server refuses the rest.
    const statuses = await Promise.all(answers);
    expect(statuses.every((status) => status === 200 || status === 503 || status === 'not accepted')).toBe(true);
    expect(statuses).toContain(200);
  });
});

describeEachRedisShape('operator surfaces with Redis %s', (shape) => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    stack = await startStack({ mode: 'bullmq', redis: shape });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('serves Bull Board at /admin/queues to the internal token only', async () => {
    const page = (authorization?: string) =>
      fetch(`${stack.web.url}/admin/queues`, { headers: authorization ? { authorization } : {} });
    const anonymous = await page();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await page('Bearer wrong-token-wrong-token')).status).toBe(401);
    const ok = await page(`Bearer ${INTERNAL_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<html');
    expect((await page(`Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}`)).status).toBe(200);
    // Its API reads the queue itself (BullMQ's scripts, on the cluster too).
    const board = await fetch(`${stack.web.url}/admin/queues/api/queues?activeQueue=deliveries&status=delayed&page=1`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
    expect(board.status).toBe(200);
    const queues = ((await board.json()) as { queues: Array<{ name: string; counts: { delayed: number } }> }).queues;
    expect(queues.find((queue) => queue.name === 'deliveries')?.counts.delayed).toBe(0);
  });

  it('reports readiness of storage and Redis, and queue depth in /metrics', async () => {
    expect(await (await fetch(`${stack.web.url}/readyz`)).json()).toStrictEqual({ ok: true, storage: 'ok', queue: 'ok' });
    await stack.subscribe('/depth');
    await stack.newContacts(2); // no workers: their deliveries wait, handed over, and nothing waits in the outbox
    const metrics = await (await fetch(`${stack.web.url}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).toMatch(/^webhook_handoff_waiting 2$/m);
    expect(metrics).toMatch(/^event_queue_depth 0$/m);
  });

  it('counts every worker listening for new events, on whichever node each subscribed', async () => {
    const listening = async () => {
      const text = await (await fetch(`${stack.web.url}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
      return Number(/^contact_hooks_workers_listening (\S+)$/m.exec(text)?.[1]);
    };
    await waitUntil(async () => (await listening()) === 0, 10_000);
    for (let i = 0; i < 3; i++) stack.startWorker();
    await waitUntil(async () => (await listening()) === 3, 20_000);
  });
});
