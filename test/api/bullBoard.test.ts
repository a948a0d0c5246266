import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { bullBoard } from '../../src/api/bullBoard.js';
import type { DeliveryJobData } from '../../src/domain/delivery.js';
import { createBullQueue } from '../../src/queue/bullmq.js';
import { QUEUE_NAMES, type JobQueue } from '../../src/queue/jobQueue.js';
import { INTERNAL_TOKEN, testConfig, testServices } from '../support/app.js';
import { openTestStore } from '../support/databases.js';
import { redisForTest } from '../support/processes.js';

/** Bull Board needs only Redis; under CI a missing REDIS_URL fails this suite instead of skipping it. */
const withRedis = Boolean(process.env.CI || process.env.REDIS_URL);

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const operator = basic('ops', INTERNAL_TOKEN);
/** The age a job must have before Bull Board's "clean" removes it (GRACE_TIME_MS in @bull-board/api), and a margin. */
const BULL_BOARD_CLEAN_GRACE_MS = 5_000 + 100;

/** Every kind of write Bull Board offers on a queue or a job. */
const writes = (jobId: string): (InjectOptions & { url: string })[] => [
  { method: 'PUT', url: '/admin/queues/api/queues/deliveries/empty' },
  { method: 'PUT', url: '/admin/queues/api/queues/deliveries/obliterate', payload: {} },
  { method: 'PUT', url: '/admin/queues/api/queues/deliveries/clean/waiting' },
  { method: 'PUT', url: '/admin/queues/api/queues/deliveries/pause' },
  { method: 'PUT', url: '/admin/queues/api/queues/pause' },
  { method: 'POST', url: '/admin/queues/api/queues/deliveries/add', payload: { name: 'x', data: {} } },
  { method: 'PUT', url: `/admin/queues/api/queues/deliveries/${jobId}/clean` },
  { method: 'PUT', url: `/admin/queues/api/queues/deliveries/${jobId}/promote` },
  { method: 'PATCH', url: `/admin/queues/api/queues/deliveries/${jobId}/update-data`, payload: { jobData: {} } },
];

describe.runIf(withRedis)('Bull Board at /admin/queues', () => {
  let redis: ReturnType<typeof redisForTest>;
  let producer: JobQueue<DeliveryJobData>;
  const apps: FastifyInstance[] = [];
  const stores: Array<() => Promise<void>> = [];
  const jobIds = [randomUUID(), randomUUID()];
  let jobsAddedAt = 0;

  /** The app as web.ts wires it with Redis, on `env`. */
  const boardApp = async (env: Record<string, string> = {}) => {
    const { store, cleanup } = await openTestStore('pglite');
    stores.push(cleanup);
    const config = testConfig({ REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, ...env });
    const admin = bullBoard({ target: redis.target, prefix: redis.prefix, writable: config.BULL_BOARD_WRITABLE });
    const app = await buildApp({ config, services: testServices(store, undefined, config), admin });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    redis = redisForTest();
    producer = createBullQueue<DeliveryJobData>({ target: redis.target, prefix: redis.prefix }, 'deliveries', {
      log: pino({ level: 'silent' }),
      failFast: true,
      kept: { completedMs: 3_600_000, completedCount: 100, failedMs: 3_600_000 },
    });
    // Deliveries parked for an hour, as a paced backlog leaves them; no worker runs.
    const runAt = Date.now() + 3_600_000;
    await producer.add(
      jobIds.map((id) => ({ id, name: 'paced', data: { delivery_id: id, event_id: id, hook_id: id, account_id: 'acct', due_at: runAt }, runAt })),
    );
    jobsAddedAt = Date.now();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await producer?.close();
    for (const cleanup of stores) await cleanup();
    await redis?.cleanup();
  });

  it('logs a browser in with the token as a Basic password, or takes it as Bearer; anything else is 401 with a Basic challenge', async () => {
    const app = await boardApp();
    for (const headers of [operator, { authorization: `Bearer ${INTERNAL_TOKEN}` }]) {
      const page = await app.inject({ method: 'GET', url: '/admin/queues', headers });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<html');
    }
    for (const headers of [{}, basic('ops', 'wrong-token-0123456789'), { authorization: 'Bearer wrong-token-0123456789' }]) {
      const refused = await app.inject({ method: 'GET', url: '/admin/queues', headers });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Basic /);
    }
  });

  it('asks no other host for anything: no Google Fonts link on its page, no outside address in the assets it loads', async () => {
    const app = await boardApp();
    const page = await app.inject({ method: 'GET', url: '/admin/queues', headers: operator });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<link href="static\/css\/main\.[0-9a-f]+\.css" rel="stylesheet">/);
    const outside = /fonts\.googleapis\.com|fonts\.gstatic\.com|(?:href|src)="(?:https?:)?\/\//;
    expect(page.body).not.toMatch(outside);
    // What the page loads: its stylesheet and scripts, served by Bull Board itself.
    const assets = [...page.body.matchAll(/(?:href|src)="(static\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const loaded = await app.inject({ method: 'GET', url: `/admin/queues/${asset}`, headers: operator });
      expect(loaded.statusCode).toBe(200);
      expect(loaded.body).not.toMatch(/fonts\.googleapis\.com|fonts\.gstatic\.com|@import\s+url\(\s*["']?https?:/);
    }
  });

  it('is read-only by default: it shows the queues and jobs, and refuses every write, which changes nothing', async () => {
    const app = await boardApp();
    const listed = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: operator });
    expect(listed.statusCode).toBe(200);
    const shown = listed.json().queues.map((queue: { name: string; readOnlyMode: boolean }) => [queue.name, queue.readOnlyMode]);
    expect(shown.sort()).toStrictEqual([...QUEUE_NAMES].sort().map((name) => [name, true]));
    expect((await app.inject({ method: 'GET', url: `/admin/queues/api/queues/deliveries/${jobIds[0]}`, headers: operator })).statusCode).toBe(200);

    for (const request of writes(jobIds[0]!)) {
      const response = await app.inject({ ...request, headers: operator });
      expect({ request: `${request.method} ${request.url}`, status: response.statusCode }).toStrictEqual({
        request: `${request.method} ${request.url}`,
        status: 405,
      });
    }
    expect((await producer.counts()).delayed).toBe(jobIds.length);
  });

  it('can clean the queue with BULL_BOARD_WRITABLE=true', async () => {
    const app = await boardApp({ BULL_BOARD_WRITABLE: 'true' });
    const listed = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: operator });
    expect(listed.json().queues.every((queue: { readOnlyMode: boolean }) => !queue.readOnlyMode)).toBe(true);
    // Bull Board's clean removes only jobs older than its grace time (5 s, in its cleanAll
    // handler): on a fast run the tests before this one take less than that.
    await sleep(Math.max(0, jobsAddedAt + BULL_BOARD_CLEAN_GRACE_MS - Date.now()));
    expect((await app.inject({ method: 'PUT', url: '/admin/queues/api/queues/deliveries/clean/delayed', headers: operator })).statusCode).toBe(200);
    expect((await producer.counts()).delayed).toBe(0);
  });
});
