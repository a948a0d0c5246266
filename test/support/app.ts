import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createEmbeddedQueue } from '../../src/queue/embeddedQueue.js';
import type { JobQueue } from '../../src/queue/jobQueue.js';
import type { EventJob } from '../../src/workers/jobs.js';
import { issueApiKey } from '../../src/services/keys.js';
import type { Store } from '../../src/storage/store.js';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** Configuration as the service would parse it from this environment. */
export const testConfig = (env: Record<string, string> = {}): Config =>
  loadConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'silent', ...env });

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
      log: pino({ level: 'silent' }),
      name: 'events',
    });
  const app: FastifyInstance = await buildApp({ config: testConfig(env), store, queue: eventQueue });
  return { app, enqueued };
}

/** Issues a key for an account through the same service the internal API and CLI use. */
export async function newKey(store: Store, accountId = 'acct-1', source = 'zapier') {
  const issued = await issueApiKey(store, accountId, { source });
  return { ...issued, auth: { authorization: `Bearer ${issued.key}` } };
}
