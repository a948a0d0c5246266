import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { NewEventsSignal } from '../../src/queue/newEvents.js';
import { createServices } from '../../src/services/index.js';
import type { Store } from '../../src/storage/store.js';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** Configuration as the service would parse it from this environment. */
export const testConfig = (env: Record<string, string> = {}): Config =>
  loadConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'silent', ...env });

const silentLog = pino({ level: 'silent' });

/** The use cases over a store (and a new-events signal, if any), as a process builds them. */
export const testServices = (store: Store, newEvents?: NewEventsSignal, config: Config = testConfig()) =>
  createServices({ store, newEvents, config, log: silentLog });

/** A new-events signal that counts its rings. */
export function countingNewEvents() {
  const rings = { count: 0 };
  const signal: NewEventsSignal = { notify: () => void rings.count++, ping: async () => {}, close: async () => {} };
  return { signal, rings };
}

/**
 * An app on a real store, with a new-events signal that only counts rings: API suites check that
 * committed events are announced; delivery itself is exercised end to end elsewhere.
 */
export async function buildTestApp(store: Store, env: Record<string, string> = {}) {
  const { signal, rings } = countingNewEvents();
  const config = testConfig(env);
  const app: FastifyInstance = await buildApp({ config, services: testServices(store, signal, config) });
  return { app, rings };
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
