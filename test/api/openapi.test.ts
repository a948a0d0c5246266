import { validate } from '@readme/openapi-parser';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/domain/events.js';
import { buildTestApp, INTERNAL_TOKEN, newKey } from '../support/app.js';
import { bearer, newAccount, openTestApp, type TestApp } from '../support/http.js';
import { dereferenced, errorCodes, examplesOf, operationsOf, requestExample, schemaChecker, type Document, type Op } from '../support/openapi.js';

const PUBLIC_TAGS = ['contacts', 'subscriptions', 'events', 'identity'];
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const check = schemaChecker();

/**
 * The public OpenAPI document (and the first-party one) as served: valid OpenAPI 3.1, complete for
 * an integrator, and never showing the first-party API without the token. What the operations
 * really answer is checked against it in openapiAnswers.test.ts.
 */
describe('the OpenAPI documents', () => {
  let t: TestApp;
  let document: Document;
  let resolved: Document;
  let publicOps: Op[];
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await openTestApp('pglite');
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    document = response.json();
    resolved = await dereferenced(document);
    publicOps = operationsOf(resolved.paths);
    auth = (await newKey(t.store, newAccount())).auth;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('the public document', () => {
    it('is valid OpenAPI 3.1 by @readme/openapi-parser, and documents every public route', async () => {
      expect(document.openapi).toBe('3.1.0');
      const result = await validate(structuredClone(document));
      expect(result.valid ? [] : result.errors).toStrictEqual([]);
      expect(publicOps.map(({ method, path }) => `${method} ${path}`).sort()).toStrictEqual(
        [
          'delete /api/v1/hooks/{id}',
          'get /api/v1/events',
          'get /api/v1/hooks',
          'get /api/v1/hooks/{id}',
          'get /api/v1/hooks/{id}/deliveries',
          'post /api/v1/hooks/{id}/enable',
          'get /api/v1/me',
          'post /api/v1/contacts',
          'post /api/v1/hooks',
        ].sort(),
      );
    });

    it('names the tags contacts, subscriptions, events and identity, and the API key as a bearer scheme', () => {
      expect(document.tags?.map((tag) => tag.name)).toStrictEqual(PUBLIC_TAGS);
      expect(document.tags?.every((tag) => Boolean(tag.description))).toBe(true);
      expect(document.security).toStrictEqual([{ apiKey: [] }]);
      expect(document.components?.securitySchemes).toStrictEqual({ apiKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    });

    it('gives every operation an id, one tag, a summary, examples, and the errors every route can answer', () => {
      const problems: string[] = [];
      for (const { path, method, operation } of publicOps) {
        const where = `${method.toUpperCase()} ${path}`;
        const want = (ok: unknown, what: string) => void (ok || problems.push(`${where}: ${what}`));
        want(operation.operationId, 'no operationId');
        want(operation.tags?.length === 1 && PUBLIC_TAGS.includes(operation.tags[0]!), `tags ${JSON.stringify(operation.tags)}`);
        want(operation.summary?.trim(), 'no summary');
        for (const parameter of (operation.parameters ?? []) as Array<{ name: string; example?: unknown }>) {
          want(parameter.example !== undefined, `no example for parameter ${parameter.name}`);
        }
        if (operation.requestBody) want(requestExample({ path, method, operation }) !== undefined, 'no request example');
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const { description, content } = response as { description: string; content?: Record<string, object> };
          want(description && description !== 'Default Response', `no description for ${status}`);
          want(content?.['application/json'] && examplesOf(content['application/json']).length > 0, `no example answer for ${status}`);
        }
        want(
          Object.keys(operation.responses ?? {}).some((status) => status.startsWith('2')),
          'no success answer',
        );
        const expected: Record<string, string[]> = {
          401: ['unauthorized'],
          404: ['not_found'],
          405: ['method_not_allowed'],
          408: ['request_timeout'],
          429: ['rate_limited'],
          500: ['internal'],
          503: ['unavailable'],
        };
        if (BODY_METHODS.has(method)) {
          Object.assign(expected, { 400: ['invalid_json', 'invalid_request'], 413: ['payload_too_large'], 415: ['unsupported_media_type'] });
        }
        for (const [status, codes] of Object.entries(expected)) {
          for (const code of codes) want(errorCodes(operation, status).includes(code), `${status} ${code} not documented`);
        }
        want((operation.responses?.['429'] as { headers?: object } | undefined)?.headers?.['Retry-After' as never], '429 without Retry-After');
        want((operation.responses?.['405'] as { headers?: object } | undefined)?.headers?.['Allow' as never], '405 without Allow');
      }
      expect(problems).toStrictEqual([]);
    });

    it('matches every example, of requests, answers, parameters and webhooks, to its schema', () => {
      let checked = 0;
      const mismatches: string[] = [];
      const holders = [...publicOps, ...operationsOf(resolved.webhooks)].flatMap(({ path, method, operation }) => [
        ...((operation.parameters ?? []) as Array<{ name: string; schema: object }>).map((parameter) => ({
          where: `${method} ${path} parameter ${parameter.name}`,
          holder: parameter,
        })),
        ...Object.values((operation.requestBody as { content?: object } | undefined)?.content ?? {}).map((holder) => ({
          where: `${method} ${path} request`,
          holder,
        })),
        ...Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
          Object.values((response as { content?: object }).content ?? {}).map((holder) => ({ where: `${method} ${path} ${status}`, holder })),
        ),
      ]);
      for (const { where, holder } of holders) {
        for (const example of examplesOf(holder)) {
          checked++;
          const errors = check((holder as { schema: object }).schema, example);
          if (errors.length > 0) mismatches.push(`${where}: ${JSON.stringify(example)} ${JSON.stringify(errors)}`);
        }
      }
      expect(mismatches).toStrictEqual([]);
      expect(checked).toBeGreaterThan(50);
    });

    it('describes each event we POST under webhooks: envelope, data, signature headers and what answers mean', () => {
      expect(Object.keys(resolved.webhooks ?? {}).sort()).toStrictEqual([...EVENT_TYPES].sort());
      for (const { path: event, method, operation } of operationsOf(resolved.webhooks)) {
        expect(method).toBe('post');
        const media = (operation.requestBody as { content: Record<string, { schema: Record<string, unknown>; example: unknown }> }).content[
          'application/json'
        ]!;
        expect(media.schema).toMatchObject({ required: ['event', 'data'], additionalProperties: false, properties: { event: { const: event } } });
        const dataFields =
          event === 'new_contact' ? ['contact_id', 'name', 'phone', 'source'] : ['conversation_id', 'channel', 'caller_name', 'caller_number', 'summary'];
        const data = (media.schema.properties as Record<string, { required: string[]; additionalProperties: boolean }>).data!;
        expect(data).toMatchObject({ additionalProperties: false });
        expect([...data.required].sort()).toStrictEqual(dataFields.sort());
        expect(check(media.schema, { event, data: {} })).not.toStrictEqual([]);
        const headers = (operation.parameters as Array<{ in: string; name: string; required: boolean }>).filter((p) => p.in === 'header');
        expect(headers.map(({ name, required }) => ({ name, required }))).toStrictEqual(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({ name, required: true })),
        );
        expect(Object.keys(operation.responses ?? {}).sort()).toStrictEqual(['2XX', '410', '429', '503', 'default']);
        expect((operation.responses!['410'] as { description: string }).description).toMatch(/subscription is removed/);
        for (const status of ['429', '503']) {
          expect((operation.responses![status] as { description: string }).description).toMatch(/not retried.*Retry-After.*10 minutes/s);
        }
      }
    });
  });

  describe('without the internal token', () => {
    /** Every GET route of an app, from Fastify's own route tree. */
    const getRoutes = (app: FastifyInstance) => {
      const parents: string[] = [];
      return app
        .printRoutes({ commonPrefix: false })
        .split('\n')
        .flatMap((line) => {
          const match = /^([│├└─ ]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line);
          if (!match) return [];
          const depth = match[1]!.length / 4 - 1;
          parents[depth] = (depth > 0 ? parents[depth - 1]! : '') + match[2]!;
          return match[3]!.split(', ').includes('GET') ? [parents[depth]] : [];
        });
    };
    const documentRoutes = (app: FastifyInstance) =>
      getRoutes(app).filter((path) => (path.startsWith('/docs') || /openapi\.(json|ya?ml)$/.test(path)) && !/[:*]/.test(path));

    it('serves the one public document at /api/v1/openapi.json, /docs/json and /docs/yaml', async () => {
      const docsJson = await t.app.inject({ method: 'GET', url: '/docs/json' });
      expect(docsJson.json()).toStrictEqual(document);
      const docsYaml = await t.app.inject({ method: 'GET', url: '/docs/yaml' });
      expect(docsYaml.statusCode).toBe(200);
      expect(docsYaml.body).toContain('title: contact-hooks public API');
      expect(docsYaml.body).not.toContain('/internal');
    });

    it('lists only the public API in every document and page under /docs, with and without a first-party API mounted', async () => {
      const { app: withoutInternal } = await buildTestApp(t.store, { INTERNAL_API_TOKEN: '' });
      try {
        for (const app of [t.app, withoutInternal]) {
          const routes = documentRoutes(app);
          expect(routes).toEqual(expect.arrayContaining(['/api/v1/openapi.json', '/docs', '/docs/json', '/docs/yaml']));
          for (const url of routes) {
            const response = await app.inject({ method: 'GET', url });
            if (url.startsWith('/internal/')) expect(response.statusCode, url).toBe(401);
            else expect(response.statusCode, url).toBeLessThan(400);
            expect(response.body, url).not.toMatch(/\/internal|\/admin|INTERNAL_API_TOKEN|internalToken/);
          }
        }
        expect(documentRoutes(t.app)).toContain('/internal/v1/openapi.json');
        expect(documentRoutes(withoutInternal).filter((path) => path.startsWith('/internal'))).toStrictEqual([]);
      } finally {
        await withoutInternal.close();
      }
    });

    it('serves the first-party document at /internal/v1/openapi.json only with the token, and without any public route', async () => {
      for (const headers of [{}, auth, bearer('not-the-token-0123456789')]) {
        const refused = await t.app.inject({ method: 'GET', url: '/internal/v1/openapi.json', headers });
        expect(refused.statusCode).toBe(401);
        expect(refused.body).not.toContain('/internal/v1/accounts');
      }
      const response = await t.app.inject({ method: 'GET', url: '/internal/v1/openapi.json', headers: bearer(INTERNAL_TOKEN) });
      expect(response.statusCode).toBe(200);
      const internal: Document = response.json();
      const result = await validate(structuredClone(internal));
      expect(result.valid ? [] : result.errors).toStrictEqual([]);
      const paths = Object.keys(internal.paths ?? {});
      expect(paths).toEqual(
        expect.arrayContaining([
          '/internal/v1/accounts/{account_id}/keys',
          '/internal/v1/accounts/{account_id}/calls',
          '/internal/v1/accounts/{account_id}/hooks',
          '/internal/v1/accounts/{account_id}/hooks/{hook_id}/enable',
          '/internal/v1/accounts/{account_id}/deliveries',
        ]),
      );
      expect(paths.filter((path) => !path.startsWith('/internal/v1/'))).toStrictEqual([]);
      expect(internal.webhooks).toBeUndefined();
      expect(internal.security).toStrictEqual([{ internalToken: [] }]);
    });

    it('has no first-party document at all when INTERNAL_API_TOKEN is unset', async () => {
      const { app } = await buildTestApp(t.store, { INTERNAL_API_TOKEN: '' });
      try {
        const response = await app.inject({ method: 'GET', url: '/internal/v1/openapi.json', headers: bearer(INTERNAL_TOKEN) });
        expect({ status: response.statusCode, body: response.json() }).toStrictEqual({ status: 404, body: { error: 'not_found' } });
      } finally {
        await app.close();
      }
    });
  });
});
