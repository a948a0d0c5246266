import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { INTERNAL_TOKEN } from './app.js';
import { client } from './client.js';
import { createPostgresDatabase } from './databases.js';
import { startProcess, startWeb, stopAllProcesses, withPostgresAndRedis, type ServiceProcess } from './processes.js';
import { startReceiver, type ReceivedRequest, type ReceiverResponse } from './receiver.js';
import { redisFor, withRedisCluster, type RedisShape } from './redisShapes.js';

export type StackMode = 'embedded' | 'workers';

/** The modes a delivery suite runs in: embedded always, web + workers where PostgreSQL and Redis are. */
export const stackModes = (): StackMode[] => (withPostgresAndRedis ? ['embedded', 'workers'] : ['embedded']);

export interface StackShape {
  label: string;
  mode: StackMode;
  redis?: RedisShape;
}

/** The modes of stackModes(), and the production shape on a Redis Cluster where the cluster suites run. */
export const stackShapes = (): StackShape[] => [
  ...stackModes().map((mode) => ({ label: mode, mode })),
  ...(withRedisCluster ? [{ label: 'workers on a Redis Cluster', mode: 'workers' as const, redis: 'cluster' as const }] : []),
];

/**
 * The service for a test file, in either shape, with an HTTPS receiver whose answer per path the
 * test sets (`delayMs`, or a whole `answers` function). `workers` is the production shape:
 * PostgreSQL (fresh database), Redis (own key prefix), a web process that only produces, and
 * `workers` worker processes, on the machine's Redis or (`redis: 'cluster'`) a Redis Cluster of
 * its own. `embedded` is one web process on PGlite in a temporary directory. `stop()` removes all of it.
 */
export async function startStack(options: {
  mode: StackMode;
  /** The workers mode's Redis: the machine's server (default), or a cluster started for this stack. */
  redis?: RedisShape;
  workers?: number;
  env?: Record<string, string>;
  /** The address the service processes reach the database at, e.g. through a proxy the test can cut. */
  serviceDatabaseUrl?: (url: string) => string;
}) {
  const teardown = createTeardown();
  try {
    return await startParts(options, teardown);
  } catch (error) {
    // A test file whose beforeAll threw has no stack to stop: what was started stops here.
    await teardown.run();
    throw error;
  }
}

/** The stops of what a stack started, run in reverse order, once. */
function createTeardown() {
  const steps: (() => Promise<unknown> | void)[] = [];
  return {
    add: (step: () => Promise<unknown> | void) => void steps.push(step),
    run: async () => {
      for (const step of steps.splice(0).reverse()) await step();
    },
  };
}

async function startParts(options: Parameters<typeof startStack>[0], teardown: ReturnType<typeof createTeardown>) {
  const { mode, workers: workerCount = 0 } = options;
  const redis = mode === 'workers' ? await redisFor(options.redis ?? 'single') : undefined;
  if (redis) teardown.add(() => redis.stop());
  const database = mode === 'workers' ? await createPostgresDatabase() : undefined;
  if (database) teardown.add(() => database.drop());
  const dataDir = mode === 'embedded' ? mkdtempSync(join(tmpdir(), 'contact-hooks-stack-')) : undefined;
  if (dataDir) teardown.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const delayMs: Record<string, number> = {};
  const answers: Record<string, (request: ReceivedRequest) => ReceiverResponse> = {};
  const receiver = await startReceiver({
    respond: (request) => answers[request.path]?.(request) ?? { delayMs: delayMs[request.path] ?? 0 },
  });
  teardown.add(() => receiver.close());
  teardown.add(stopAllProcesses);
  const env = {
    ...(database && redis ? { DATABASE_URL: options.serviceDatabaseUrl?.(database.url) ?? database.url, ...redis.env } : { DATA_DIR: dataDir! }),
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_LOCK_MS: '2000',
    SHUTDOWN_GRACE_MS: '8000',
    ...options.env,
  };
  const web = await startWeb(env);
  const http = client(web.url);
  const api = http.api(await http.newKey('acme'));
  const workers: ServiceProcess[] = [];
  const startWorker = () => {
    const worker = startProcess('worker', env);
    workers.push(worker);
    return worker;
  };
  for (let i = 0; i < workerCount; i++) startWorker();
  let phone = 4155551000;

  const received = (path: string) => receiver.requests.filter((request) => request.path === path);

  return {
    web,
    http,
    api,
    env,
    redis,
    workers,
    startWorker,
    delayMs,
    answers,
    receiver,
    received,
    /** How many POSTs each event got at `path`; at most once means every count is 1. */
    countsPerDelivery(path: string) {
      const counts = new Map<string, number>();
      for (const request of received(path)) {
        const id = String(request.headers['webhook-id']);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    async subscribe(path: string, event = 'new_contact') {
      const created = await api('POST', '/hooks', { event, target_url: `${receiver.url}${path}` });
      expect(created.status).toBe(201);
      return created.body.id as string;
    },
    /** Upserts `count` new phones (one `new_contact` event each); returns the contact ids. */
    async newContacts(count: number) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const upserted = await api('POST', '/contacts', { phone: `+1${phone++}` });
        expect(upserted.body.action).toBe('inserted');
        ids.push(upserted.body.contact_id);
      }
      return ids;
    },
    /** Reads what the service committed (PostgreSQL only: PGlite allows one process, the server's). */
    async sql(text: string, params: unknown[] = []) {
      if (!database) throw new Error('sql() needs the workers stack; read an embedded service through its API');
      const connection = new pg.Client({ connectionString: database.url });
      await connection.connect();
      try {
        return (await connection.query(text, params)).rows;
      } finally {
        await connection.end();
      }
    },
    stop: teardown.run,
  };
}
