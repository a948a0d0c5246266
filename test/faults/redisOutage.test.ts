import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client } from '../support/client.js';
import { startRedisCluster } from '../../kit/redisCluster.js';
import { sleep, startProcess, startWeb, stopAllProcesses, freePort, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { describeEachRedisShape, type RedisShape } from '../support/redisShapes.js';
import { baseEnv, countBy, newPhone, serviceStore, type ServiceStore } from './support.js';

/** A redis-server of this test's own on 127.0.0.1, so stopping it leaves the machine's Redis alone. */
function startRedis(port: number) {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * A Redis of the test's own that it can take away and bring back empty (nothing is kept on disk):
 * one server, or every master of a 3-master cluster at once.
 */
async function ownRedis(
  shape: RedisShape,
): Promise<{ env: Record<string, string>; kill(): Promise<unknown>; restart(): Promise<void>; stop(): Promise<unknown> }> {
  if (shape === 'cluster') {
    const cluster = await startRedisCluster();
    return { env: { REDIS_CLUSTER_NODES: cluster.nodes }, kill: cluster.kill, restart: cluster.restart, stop: cluster.stop };
  }
  const port = await freePort();
  let server = startRedis(port);
  return {
    env: { REDIS_URL: `redis://127.0.0.1:${port}` },
    kill: () => server.kill(),
    restart: async () => void (server = startRedis(port)),
    stop: () => server.kill(),
  };
}

const readyz = async (url: string) => {
  const response = await fetch(`${url}/readyz`).catch(() => undefined);
  return response && { status: response.status, body: await response.json() };
};

/**
 * Redis goes away while events fire: the API keeps answering (events wait in the outbox), and
 * once Redis is back the worker's relay enqueues them, and each is delivered exactly once.
 */
describeEachRedisShape('Redis %s stopped and restarted while events fire', (shape) => {
  const FIRED = 20;
  let store: ServiceStore;
  let receiver: Receiver;
  let redis: Awaited<ReturnType<typeof ownRedis>> | undefined;
  let web: Awaited<ReturnType<typeof startWeb>>;
  let worker: ReturnType<typeof startProcess>;

  beforeAll(async () => {
    store = await serviceStore('postgres');
    receiver = await startReceiver();
    redis = await ownRedis(shape);
    const env = { ...baseEnv, ...store.env, ...redis.env, WORKER_LOCK_MS: '2000' };
    web = await startWeb(env);
    // At info, so that a failure's log shows what the relay did.
    worker = startProcess('worker', { ...env, LOG_LEVEL: 'info' });
    await waitUntil(async () => (await readyz(web.url))?.status === 200, 10_000);
  });

  afterAll(async () => {
    await stopAllProcesses();
    await redis?.stop();
    await receiver?.close();
    await store?.cleanup();
  });

  it('answers while Redis is down and delivers every event fired meanwhile once it is back, exactly once', async () => {
    const http = client(web.url);
    const api = http.api(await http.newKey('outage'));
    const hook = await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/outage` });
    expect(hook.status).toBe(201);

    // The pipeline works before the outage.
    expect((await api('POST', '/contacts', { phone: newPhone() })).body.action).toBe('inserted');
    await receiver.waitFor(1, 10_000);

    await redis!.kill();
    await waitUntil(async () => (await readyz(web.url))?.status === 503, 10_000);
    expect(await readyz(web.url)).toStrictEqual({ status: 503, body: { ok: false, storage: 'ok', queue: 'unavailable' } });

    const timings: number[] = [];
    const contactIds: string[] = [];
    for (let i = 0; i < FIRED; i++) {
      const started = performance.now();
      const upserted = await api('POST', '/contacts', { phone: newPhone() });
      timings.push(performance.now() - started);
      expect(upserted.status).toBe(200);
      expect(upserted.body.action).toBe('inserted');
      contactIds.push(upserted.body.contact_id);
    }
    const slowest = Math.max(...timings);
    expect(slowest).toBeLessThan(2000);
    const events = await store.query<{ id: string }>("SELECT id FROM events WHERE data->>'contact_id' = ANY($1)", [contactIds]);
    expect(events).toHaveLength(FIRED);
    const deliveredDuringOutage = receiver.requests.length - 1;

    await redis!.restart();
    const down = Date.now();
    await waitUntil(async () => (await readyz(web.url))?.status === 200, 20_000);
    expect((await readyz(web.url))?.body).toStrictEqual({ ok: true, storage: 'ok', queue: 'ok' });

    const fired = new Set(events.map((event) => event.id));
    const receivedFired = () => receiver.requests.filter((request) => fired.has(String(request.headers['webhook-id'])));
    await waitUntil(() => new Set(receivedFired().map((request) => request.headers['webhook-id'])).size === FIRED, 30_000);
    const recoveredInMs = Date.now() - down;
    await sleep(2000); // stragglers: a second POST of any event would show up here

    const perEvent = countBy(receivedFired(), (request) => String(request.headers['webhook-id']));
    const duplicated = [...perEvent.values()].filter((count) => count > 1).length;
    console.info(
      `[redisOutage ${shape}] fired while down: ${FIRED}, answered 200: ${timings.length} (slowest ${Math.round(slowest)} ms), ` +
        `delivered during outage: ${deliveredDuringOutage}, delivered after restart: ${perEvent.size} ` +
        `(all within ${recoveredInMs} ms of the restart), lost: ${FIRED - perEvent.size}, duplicated: ${duplicated}`,
    );
    expect(deliveredDuringOutage).toBe(0);
    expect(perEvent.size).toBe(FIRED);
    expect(duplicated).toBe(0);
    expect(receiver.requests).toHaveLength(FIRED + 1);
  });

  it('delivers a paced backlog that was waiting in Redis when Redis lost everything, each delivery once', async () => {
    const http = client(web.url);
    const api = http.api(await http.newKey('lost-backlog'));
    const hook = await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/backlog`, max_per_second: 2 });
    expect(hook.status).toBe(201);
    const received = () => receiver.requests.filter((request) => request.path === '/backlog');
    for (let i = 0; i < 10; i++) expect((await api('POST', '/contacts', { phone: newPhone() })).body.action).toBe('inserted');
    await waitUntil(() => received().length >= 2, 10_000);

    // This Redis keeps nothing on disk: the delayed jobs, and the pacer's state, are gone with it.
    await redis!.kill();
    await sleep(1_000);
    await redis!.restart();
    await waitUntil(
      () => received().length >= 10,
      30_000,
      () => `received ${received().length} of 10; the worker's log:\n${worker.output().slice(-8_000)}`,
    );
    await sleep(2_000);
    const perEvent = countBy(received(), (request) => String(request.headers['webhook-id']));
    console.info(
      `[redisOutage ${shape}] paced backlog of 10 through a Redis restart that lost every job: delivered ${perEvent.size}, duplicated ${[...perEvent.values()].filter((n) => n > 1).length}`,
    );
    expect(perEvent.size).toBe(10);
    expect([...perEvent.values()].every((count) => count === 1)).toBe(true);
  });
});
