import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { buildTestApp, INTERNAL_TOKEN } from './app.js';
import { openTestStore, type Engine } from './databases.js';

type Response = Awaited<ReturnType<FastifyInstance['inject']>>;

/** A real store on the engine and an app on it; `close` shuts both. One per suite and engine. */
export async function openTestApp(engine: Engine, env: Record<string, string> = {}) {
  const { store, db, cleanup } = await openTestStore(engine);
  const { app, enqueued } = await buildTestApp(store, env);
  return {
    store,
    db,
    app,
    /** The events whose jobs were added to the events queue as they committed, oldest first. */
    enqueued: () => enqueued,
    async close() {
      await app.close();
      await cleanup();
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof openTestApp>>;

/**
 * The calling suite's app on a real store of the engine: opened before its tests and closed
 * after them by the hooks this registers (as fastify/demo's `build(t)` does), so a suite only says
 * `const t = useTestApp(engine)` and uses `t.app`, `t.store`, `t.db` and `t.enqueued()` in its tests.
 */
export function useTestApp(engine: Engine, env: Record<string, string> = {}): Omit<TestApp, 'close'> {
  let opened: TestApp | undefined;
  beforeAll(async () => {
    opened = await openTestApp(engine, env);
  });
  afterAll(async () => {
    await opened?.close();
  });
  const current = () => {
    if (!opened) throw new Error('useTestApp: the app opens in beforeAll; use it inside tests and hooks');
    return opened;
  };
  return {
    get app() {
      return current().app;
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

/** A fresh account id, so tests sharing one store never see each other's data. */
export const newAccount = () => `acct-${randomUUID()}`;

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const internalAuth = bearer(INTERNAL_TOKEN);

/** A well-formed key that was never issued. */
export const unknownKey = `chk_${'A'.repeat(43)}`;

/** Every error the service answers is exactly `{"error": code}`. */
export function expectError(response: Response, status: number, code: string) {
  expect({ status: response.statusCode, body: response.json() }).toStrictEqual({ status, body: { error: code } });
}

/** `SELECT count(*) FROM <from>`: the rows a test expects (or expects not) to exist. */
export async function count(db: Database, from: string, params: unknown[] = []) {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${from}`, params);
  return rows[0]!.n;
}

/** Everything the API can change, to show that a refused request changed none of it. */
export async function snapshot(db: Database) {
  const [contacts, hooks, events, keys] = await Promise.all([
    db.query('SELECT id, account_id, phone, name, email, source, owner_fields, updated_at FROM contacts ORDER BY id'),
    db.query('SELECT id, api_key_id, event_type, target_url, deleted_at FROM hooks ORDER BY id'),
    db.query('SELECT id, event_type FROM events ORDER BY id'),
    db.query('SELECT id, key_hash, revoked_at FROM api_keys ORDER BY id'),
  ]);
  return { contacts: contacts.rows, hooks: hooks.rows, events: events.rows, keys: keys.rows };
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Reads a contact back through the first-party API, as the platform would. */
export async function getContact(app: FastifyInstance, accountId: string, contactId: string) {
  const response = await app.inject({ method: 'GET', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}`, headers: internalAuth });
  expect(response.statusCode).toBe(200);
  return response.json<{ contact_id: string; phone: string; name: string | null; email: string | null; source: string; owner_fields: string[] }>();
}

export async function ownerEdit(app: FastifyInstance, accountId: string, contactId: string, edit: Record<string, unknown>) {
  return app.inject({ method: 'PATCH', url: `/internal/v1/accounts/${accountId}/contacts/${contactId}`, headers: internalAuth, payload: edit });
}
