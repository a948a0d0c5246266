import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createEmbeddedQueue } from '../../src/queue/embeddedQueue.js';
import type { JobQueue } from '../../src/queue/jobQueue.js';
import type { EventJob } from '../../src/workers/jobs.js';
import { createServices } from '../../src/services/index.js';
import type { Store } from '../../src/storage/store.js';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** Configuration as the service would parse it from this environment. */
export const testConfig = (env: Record<string, string> = {}): Config =>
  loadConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'silent', ...env });

const silentLog = pino({ level: 'silent' });

/** The use cases over a store (and a queue, if any), as a process builds them. */
export const testServices = (store: Store, queue?: JobQueue<EventJob>, config: Config = testConfig()) =>
  createServices({ store, queue, config, log: silentLog });

/**
 * An app on a real store, with an embedded queue whose job handler only records event ids:
 * API suites check what was enqueued; delivery itself is exercised end to end elsewhere.
 */
export async function buildTestApp(store: Store, env: Record<string, string> = {}, queue?: JobQueue<EventJob>) {
  const enqueued: string[] = [];
  const eventQueue =
    queue ??
    createEmbeddedQueue<EventJob>(async ({ eventId }) => void enqueued.push(eventId), {
      capacity: 10_000,
      concurrency: 4,
      log: silentLog,
      name: 'events',
    });
  const config = testConfig(env);
  const app: FastifyInstance = await buildApp({ config, services: testServices(store, eventQueue, config) });
  return { app, enqueued };
}

/** Issues a key for an account through the same use case the internal API and CLI run. */
export const issueKey = (store: Store, accountId: string, options: { source?: string; name?: string } = {}) =>
  testServices(store).keys.issue(accountId, options);

/** A key with the Authorization header that carries it. */
export async function newKey(store: Store, accountId = 'acct-1', source = 'zapier') {
  const issued = await issueKey(store, accountId, { source });
  return { ...issued, auth: { authorization: `Bearer ${issued.key}` } };
}
