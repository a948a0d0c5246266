import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { collectingQueue, INTERNAL_TOKEN, newKey, testConfig, testServices } from '../support/app.js';
import { engines, unreachableStore } from '../support/databases.js';
import { internalAuth, newAccount, openTestApp, useTestApp, unknownKey } from '../support/http.js';

const silentQueue = () => collectingQueue().queue;

describe.each(engines())('platform endpoints on %s', (engine) => {
  const t = useTestApp(engine);

  describe('health', () => {
    it('answers /healthz 200 without a key', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/healthz' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ ok: true });
    });

    it('answers /readyz 200 with storage ok', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toStrictEqual({ ok: true, storage: 'ok', queue: 'ok' });
    });

    it('answers /readyz 503 when storage does not answer, while /healthz stays 200', async () => {
      const store = await unreachableStore(engine);
      const down = await buildApp({ config: testConfig(), services: testServices(store, silentQueue()) });
      try {
        const ready = await down.inject({ method: 'GET', url: '/readyz' });
        expect(ready.statusCode).toBe(503);
        expect(ready.json()).toStrictEqual({ ok: false, storage: 'unavailable', queue: 'ok' });
        expect((await down.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      } finally {
        await down.close();
        await store.close();
      }
    });
  });

  describe('metrics', () => {
    it('serves Prometheus text with http_request_duration_seconds by route and status, to the bearer token', async () => {
      await t.app.inject({ method: 'GET', url: '/healthz' });
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: internalAuth });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.body).toContain('# TYPE http_request_duration_seconds histogram');
      const healthz = response.body.split('\n').filter((line) => line.startsWith('http_request_duration_seconds_count{') && line.includes('route="/healthz"'));
      expect(healthz).toHaveLength(1);
      expect(healthz[0]).toContain('method="GET"');
      expect(healthz[0]).toContain('status="200"');
      expect(Number(healthz[0]!.split(' ').at(-1))).toBeGreaterThanOrEqual(1);
    });

    it.each([
      ['no Authorization header', undefined],
      ['a wrong token', 'Bearer wrong-token-0123456789'],
      ['the token as a Basic password', `Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}`],
      ['the token without a scheme', INTERNAL_TOKEN],
      ['an API key', `Bearer ${unknownKey}`],
    ])('answers 401 unauthorized to %s, showing no metric', async (_why, authorization) => {
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expect({ status: response.statusCode, body: response.json() }).toStrictEqual({ status: 401, body: { error: 'unauthorized' } });
    });

    it('answers 404 not_found when no INTERNAL_API_TOKEN is configured', async () => {
      const open = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), services: testServices(t.store, silentQueue()) });
      try {
        for (const headers of [{}, internalAuth]) {
          const response = await open.inject({ method: 'GET', url: '/metrics', headers });
          expect({ status: response.statusCode, body: response.json() }).toStrictEqual({ status: 404, body: { error: 'not_found' } });
        }
      } finally {
        await open.close();
      }
    });
  });

  describe('request logs', () => {
    let lines: string[];
    let logged: FastifyInstance;

    beforeAll(async () => {
      lines = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      logged = await buildApp({ config: testConfig(), services: testServices(t.store, silentQueue()), logger });
    });
    afterAll(async () => {
      await logged?.close();
    });

    it('writes one JSON line per request with method, route, status and durationMs, and never a key or the Authorization header', async () => {
      const key = await newKey(t.store, newAccount());
      const requests = [
        logged.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: { phone: '+14155550100' } }),
        logged.inject({ method: 'GET', url: '/api/v1/hooks', headers: { authorization: `Bearer ${unknownKey}` } }),
        logged.inject({ method: 'GET', url: '/api/v1/nope', headers: key.auth }),
        logged.inject({ method: 'POST', url: `/internal/v1/accounts/${newAccount()}/keys`, headers: internalAuth, payload: {} }),
        // Refused by the router itself, before any hook runs.
        logged.inject({ method: 'DELETE', url: '/api/v1/hooks/%ZZ', headers: key.auth }),
        logged.inject({ method: 'DELETE', url: `/api/v1/hooks/${'a'.repeat(300)}`, headers: key.auth }),
      ];
      const responses = [];
      for (const request of requests) responses.push(await request);
      const issuedKey: string = responses[3]!.json().key;
      await vi.waitFor(() => expect(lines).toHaveLength(requests.length));

      const entries = lines.map((line) => JSON.parse(line));
      expect(lines.every((line) => line.endsWith('\n') && !line.trimEnd().includes('\n'))).toBe(true);
      const byStatus = (a: { status: number; method: string }, b: { status: number; method: string }) =>
        a.status - b.status || a.method.localeCompare(b.method);
      expect(entries.map(({ method, route, status }) => ({ method, route, status })).sort(byStatus)).toStrictEqual([
        { method: 'POST', route: '/api/v1/contacts', status: 200 },
        { method: 'POST', route: '/internal/v1/accounts/:account_id/keys', status: 201 },
        { method: 'DELETE', route: 'unmatched', status: 400 },
        { method: 'GET', route: '/api/v1/hooks', status: 401 },
        { method: 'DELETE', route: 'unmatched', status: 404 },
        { method: 'GET', route: 'unmatched', status: 404 },
      ]);
      for (const entry of entries) {
        expect(entry.durationMs).toEqual(expect.any(Number));
        expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      }

      const all = lines.join('');
      for (const secret of [key.key, key.key.slice(4), unknownKey, issuedKey, INTERNAL_TOKEN]) expect(all).not.toContain(secret);
      expect(all.toLowerCase()).not.toContain('authorization');
      expect(all.toLowerCase()).not.toContain('bearer');
    });

    it('logs a storage failure without the key or the header either', async () => {
      const broken = await openTestApp(engine);
      const brokenLines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void brokenLines.push(line) });
      const brokenApp = await buildApp({ config: testConfig(), services: testServices(broken.store, silentQueue()), logger });
      try {
        const key = await newKey(broken.store, newAccount());
        await broken.db.exec('DROP TABLE contacts');
        const response = await brokenApp.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: { phone: '+14155550100' } });
        expect(response.statusCode).toBe(500);
        await vi.waitFor(() => expect(brokenLines.some((line) => JSON.parse(line).msg === 'request')).toBe(true));
        const all = brokenLines.join('');
        expect(all).not.toContain(key.key);
        expect(all.toLowerCase()).not.toContain('bearer');
      } finally {
        await brokenApp.close();
        await broken.close();
      }
    });
  });
});
