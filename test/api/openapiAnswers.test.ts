import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newKey } from '../support/app.js';
import { unreachableStore } from '../support/databases.js';
import { newAccount, openTestApp, type TestApp } from '../support/http.js';
import { dereferenced, expectDocumented, operationsOf, requestExample, schemaChecker, urlOf, type Op } from '../support/openapi.js';

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const check = schemaChecker();
const documented = (op: Op, response: Awaited<ReturnType<FastifyInstance['inject']>>, what: string) => expectDocumented(check, op, response, what);

/**
 * Every public operation, taken from the served document, is sent its example request and then
 * malformed, missing and mistyped input, no key, too many requests and a storage outage: each
 * answer must be one the document lists for it, with a body its schema accepts. A route added
 * later is probed the same way without any change here.
 */
describe('what each public operation answers is what it documents', () => {
  let t: TestApp;
  let publicOps: Op[];
  let auth: Record<string, string>;

  const send = (app: FastifyInstance, op: Op, options: { url?: string; headers?: Record<string, string>; payload?: unknown } = {}) =>
    app.inject({
      method: op.method.toUpperCase() as 'GET',
      url: options.url ?? urlOf(op),
      headers: { ...auth, ...(options.payload !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      payload: options.payload as string,
    });

  beforeAll(async () => {
    t = await openTestApp('pglite');
    publicOps = operationsOf((await dereferenced((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json())).paths);
    expect(publicOps.length).toBeGreaterThan(5);
    auth = (await newKey(t.store, newAccount())).auth;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers its example request as documented, with success where the path takes no id', async () => {
    for (const op of publicOps) {
      const response = await send(t.app, op, { payload: requestExample(op) });
      documented(op, response, 'its example');
      if (!op.path.includes('{')) expect(response.statusCode, `${op.method} ${op.path}`).toBeLessThan(300);
    }
  });

  it('answers malformed, missing and mistyped input, and a missing key, only with documented errors', async () => {
    const weird = [null, 12345, 'not valid ☃', [], { nested: true }, ''];
    for (const op of publicOps) {
      documented(op, await send(t.app, op, { headers: { authorization: '' } }), 'no key');
      documented(op, await send(t.app, op, { headers: { authorization: 'Bearer chk_unknown' } }), 'an unknown key');
      if (BODY_METHODS.has(op.method)) {
        for (const payload of ['{"x":', '[]', '"text"', 'null', '', JSON.stringify({ padding: 'x'.repeat(70_000) })]) {
          documented(op, await send(t.app, op, { payload }), `body ${payload.slice(0, 20)}`);
        }
        const text = await send(t.app, op, { payload: 'hello', headers: { 'content-type': 'text/plain' } });
        documented(op, text, 'a text body');
      }
      const example = requestExample(op) as Record<string, unknown> | undefined;
      for (const field of Object.keys(example ?? {})) {
        const { [field]: _left, ...without } = example!;
        documented(op, await send(t.app, op, { payload: without }), `without ${field}`);
        for (const value of weird) documented(op, await send(t.app, op, { payload: { ...example, [field]: value } }), `${field}: ${JSON.stringify(value)}`);
      }
      for (const parameter of (op.operation.parameters ?? []) as Array<{ name: string; in: string }>) {
        const variants = ['bogus', '-1', '', 'a'.repeat(300), '%ZZ'];
        for (const value of variants) {
          const url = parameter.in === 'path' ? urlOf(op, { [parameter.name]: value || '%20' }) : urlOf(op, {}, { [parameter.name]: value });
          documented(op, await send(t.app, op, { url, payload: requestExample(op) }), `${parameter.name}=${value}`);
        }
        if (parameter.in === 'query') documented(op, await send(t.app, op, { url: urlOf(op, {}, { [parameter.name]: undefined }) }), `no ${parameter.name}`);
      }
    }
  });

  it('answers a method its path does not take with 405 and Allow, as every operation of that path documents', async () => {
    for (const op of publicOps) {
      const taken = publicOps.filter((other) => other.path === op.path).map((other) => other.method.toUpperCase());
      const method = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((candidate) => !taken.includes(candidate))!;
      const response = await t.app.inject({ method: method as 'PUT', url: urlOf(op), headers: auth });
      expect(response.statusCode, `${method} ${op.path}`).toBe(405);
      documented(op, response, `${method} instead`);
    }
  });

  it('answers 429 rate_limited with Retry-After past the rate limit, as documented', async () => {
    const { app } = await buildTestApp(t.store, { RATE_LIMIT_PER_MINUTE: '1' });
    try {
      for (const op of publicOps) {
        const key = (await newKey(t.store, newAccount())).auth;
        await send(app, op, { headers: key, payload: requestExample(op) });
        const response = await send(app, op, { headers: key, payload: requestExample(op) });
        expect(response.statusCode).toBe(429);
        documented(op, response, 'past the rate limit');
      }
    } finally {
      await app.close();
    }
  });

  it('answers 503 unavailable when storage does not answer, as documented', async () => {
    // A PostgreSQL server nobody listens for: connections are refused, as in an outage.
    const store = await unreachableStore('postgres');
    const { app } = await buildTestApp(store);
    try {
      for (const op of publicOps) {
        const response = await send(app, op, { payload: requestExample(op) });
        expect(response.statusCode).toBe(503);
        documented(op, response, 'storage down');
      }
    } finally {
      await app.close();
    }
  });
});
