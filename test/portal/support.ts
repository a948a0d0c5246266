import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { INTERNAL_TOKEN, storedHook } from '../support/app.js';
import type { Engine } from '../support/databases.js';
import { newContactDeliveries } from '../support/databases.js';
import { openTestApp, type TestApp } from '../support/http.js';
import type { Store } from '../../src/storage/store.js';

/** A rule that never disables: these suites set a hook's state themselves. */
const NEVER = { afterMs: 86_400_000, minFailures: 1_000_000 };

/** Asks the service for a portal link of the account, as the platform does. */
export async function mintLink(baseUrl: string, accountId: string, body: unknown = { capabilities: ['read', 'manage'] }) {
  const response = await fetch(`${baseUrl}/internal/v1/accounts/${encodeURIComponent(accountId)}/portal-sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { url: string; expires_at: string; error?: string } };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** A browser's part over plain HTTP: opens a link, keeps its session cookie, and sends forms. */
export function portalClient(baseUrl: string) {
  let cookie: string | undefined;
  const send = async (method: string, path: string, form?: Record<string, string>): Promise<Answer> => {
    const response = await fetch(path.startsWith('http') ? path : baseUrl + path, {
      method,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) cookie = setCookie.split(';')[0];
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return {
    open: (url: string) => send('GET', url),
    get: (path: string) => send('GET', path),
    post: (path: string, form?: Record<string, string>) => send('POST', path, form),
    /** The CSRF token the session's pages carry in their forms. */
    async csrf() {
      const home = await send('GET', '/portal');
      expect(home.status).toBe(200);
      return /name="csrf" value="([^"]+)"/.exec(home.text)?.[1] ?? '';
    },
    /** The session token its cookie carries. */
    sessionToken: () => cookie?.slice(cookie.indexOf('=') + 1),
  };
}

/** A portal client signed in to the account with these capabilities. */
export async function signedIn(baseUrl: string, accountId: string, capabilities = ['read', 'manage']) {
  const client = portalClient(baseUrl);
  const link = await mintLink(baseUrl, accountId, { capabilities });
  expect(link.status).toBe(201);
  expect((await client.open(link.body.url)).status).toBe(303);
  return client;
}

/**
 * The suite's app on a real store of the engine, listening on 127.0.0.1 so that tests speak
 * real HTTP to it (cookies, headers): `t.url`, and the store under it.
 */
export function usePortalApp(engine: Engine, env: Record<string, string> = {}) {
  let opened: (TestApp & { url: string }) | undefined;
  beforeAll(async () => {
    const app = await openTestApp(engine, env);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    opened = { ...app, url: `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    await opened?.close();
  });
  const current = () => {
    if (!opened) throw new Error('usePortalApp: the app opens in beforeAll; use it inside tests');
    return opened;
  };
  return {
    get url() {
      return current().url;
    },
    get store() {
      return current().store;
    },
    get db() {
      return current().db;
    },
    enqueued: () => current().enqueued(),
  };
}

/**
 * An account with a key and a new_contact hook on it, and `outcomes` deliveries to it, each
 * recorded with its status as the engine records them. Returns their ids, oldest first.
 */
export async function seededAccount(store: Store, outcomes: Array<'delivered' | 'failed'> = ['delivered', 'failed']) {
  const accountId = `acct-${randomUUID()}`;
  const { hookId, keyId } = await storedHook(store, accountId);
  const deliveries = await newContactDeliveries(
    store,
    accountId,
    outcomes.map((_, i) => `+1415555${String(1000 + i)}`),
  );
  const ids = deliveries.map((delivery) => delivery.id);
  expect(await store.deliveries.claim(ids, randomUUID())).toHaveLength(ids.length);
  await store.deliveries.record(
    ids.map((deliveryId, i) => ({ deliveryId, status: outcomes[i]!, responseStatus: outcomes[i] === 'delivered' ? 200 : 500, durationMs: 7 })),
    NEVER,
  );
  return { accountId, hookId, keyId, deliveryIds: ids };
}
