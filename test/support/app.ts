import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { FiredEvent } from '../../src/domain/events.js';
import type { JobQueue } from '../../src/queue/jobQueue.js';
import { createServices } from '../../src/services/index.js';
import type { Store } from '../../src/storage/store.js';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** Configuration as the service would parse it from this environment. */
export const testConfig = (env: Record<string, string> = {}): Config => loadConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'silent', ...env });

const silentLog = pino({ level: 'silent' });

/** The use cases over a store (and an `events` queue, if any), as a process builds them. */
export const testServices = (store: Store, events?: JobQueue<FiredEvent>, config: Config = testConfig()) =>
  createServices({ store, events, config, log: silentLog });

/** A queue that keeps the data of the jobs added to it, and runs nothing. */
export function collectingQueue<Data = FiredEvent>() {
  const added: Data[] = [];
  const queue: JobQueue<Data> = {
    add: async (jobs) => void added.push(...jobs.map((job) => job.data)),
    counts: async () => ({ waiting: added.length, active: 0, delayed: 0, completed: 0, failed: 0 }),
    ping: async () => {},
    close: async () => {},
  };
  return { queue, added };
}

/**
 * An app on a real store, with an `events` queue that only keeps what is added to it: API suites
 * check which committed events are enqueued; delivery itself is exercised end to end elsewhere.
 */
export async function buildTestApp(store: Store, env: Record<string, string> = {}) {
  const { queue, added } = collectingQueue();
  const config = testConfig(env);
  const app: FastifyInstance = await buildApp({ config, services: testServices(store, queue, config) });
  return { app, enqueued: added };
}

/** Issues a key for an account through the same use case the internal API and CLI run. */
export const issueKey = (store: Store, accountId: string, options: { source?: string; name?: string } = {}) =>
  testServices(store).keys.issue(accountId, options);

/** A key with the Authorization header that carries it. */
export async function newKey(store: Store, accountId = 'acct-1', source = 'zapier') {
  const issued = await issueKey(store, accountId, { source });
  return { ...issued, auth: { authorization: `Bearer ${issued.key}` } };
}

/** A new_contact hook of a fresh key of `accountId`, made in storage (no HTTP): its id and its key's. */
export async function storedHook(store: Store, accountId: string, targetUrl = 'https://hooks.example.com/a') {
  const key = await issueKey(store, accountId);
  const created = await store.hooks.create(
    { keyId: key.id, accountId },
    { eventType: 'new_contact', targetUrl, maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
    10,
  );
  if (created.outcome !== 'created') throw new Error(created.outcome);
  return { hookId: created.hook.id, keyId: key.id };
}
