import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { DeliveryHandoff } from '../../src/queue/handoff.js';
import { createServices } from '../../src/services/index.js';
import type { QueuedDelivery } from '../../src/storage/events.js';
import type { Store } from '../../src/storage/store.js';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** Configuration as the service would parse it from this environment. */
export const testConfig = (env: Record<string, string> = {}): Config =>
  loadConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'silent', ...env });

const silentLog = pino({ level: 'silent' });

/** The use cases over a store (and a delivery handoff, if any), as a process builds them. */
export const testServices = (store: Store, handoff?: DeliveryHandoff, config: Config = testConfig()) =>
  createServices({ store, handoff, config, log: silentLog });

/** A delivery handoff that keeps what it is handed. */
export function collectingHandoff() {
  const handed: QueuedDelivery[] = [];
  const handoff: DeliveryHandoff = { handOff: (deliveries) => void handed.push(...deliveries), ping: async () => {}, close: async () => {} };
  return { handoff, handed };
}

/**
 * An app on a real store, with a handoff that only keeps the deliveries it is handed: API suites
 * check what committed events hand over; delivery itself is exercised end to end elsewhere.
 */
export async function buildTestApp(store: Store, env: Record<string, string> = {}) {
  const { handoff, handed } = collectingHandoff();
  const config = testConfig(env);
  const app: FastifyInstance = await buildApp({ config, services: testServices(store, handoff, config) });
  return { app, handed };
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
