import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { createPostgresDatabase, withPostgres } from '../support/databases.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { baseEnv, newPhone } from './support.js';

interface Answer {
  what: string;
  status: number;
  body: string;
  ms: number;
}

/**
 * PostgreSQL unreachable for a moment, in embedded-queue mode: every request that needs it gets a
 * bounded, clean 503 `{"error":"unavailable"}` (never a hang, never a 500 or internals), /readyz
 * says so, and the service answers normally again by itself once the database is back.
 */
describe.runIf(withPostgres)('PostgreSQL unreachable for a moment', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let web: Awaited<ReturnType<typeof startWeb>>;
  let key: string;
  let hookId: string;

  const send = async (what: string, method: string, path: string, token: string, body?: unknown): Promise<Answer> => {
    const started = performance.now();
    const response = await fetch(web.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { what, status: response.status, body: await response.text(), ms: performance.now() - started };
  };
  /** Every kind of database work the API does: key lookup, reads, writes, transactions. */
  const everyKind = () => [
    send('upsert', 'POST', '/api/v1/contacts', key, { phone: newPhone(), name: 'Down' }),
    send('list hooks', 'GET', '/api/v1/hooks', key),
    send('subscribe', 'POST', '/api/v1/hooks', key, { event: 'new_contact', target_url: 'https://127.0.0.1:9/x' }),
    send('delivery log', 'GET', `/api/v1/hooks/${hookId}/deliveries`, key),
    send('events', 'GET', '/api/v1/events?event=new_contact', key),
    send('issue key', 'POST', '/internal/v1/accounts/pg-outage/keys', INTERNAL_TOKEN, { source: 'zapier' }),
    send('report call', 'POST', '/internal/v1/accounts/pg-outage/calls', INTERNAL_TOKEN, {
      channel: 'voice',
      outcome: 'voicemail',
      spam: false,
      caller_name: 'A',
      caller_number: '+14155550100',
      summary: 's',
    }),
    send('sync contact', 'POST', '/internal/v1/accounts/pg-outage/contacts/sync', INTERNAL_TOKEN, { phone: newPhone(), source: 'hubspot' }),
  ];
  const readyz = () => send('readyz', 'GET', '/readyz', key);
  /** The outage finds the pool full of open, idle connections: each request takes one of those first. */
  const warmPool = () => Promise.all([...everyKind(), ...everyKind(), ...everyKind(), ...everyKind()]);

  /** Checks the answers given during an outage, restores the database and waits for recovery. */
  const checkOutage = async (label: string, answers: Answer[], ready: Answer, boundMs: number) => {
    const unclean = answers.filter((answer) => answer.status !== 503 || answer.body !== '{"error":"unavailable"}');
    const slowest = answers.reduce((max, answer) => (answer.ms > max.ms ? answer : max));
    proxy.restore();
    const restored = Date.now();
    await waitUntil(async () => (await send('upsert', 'POST', '/api/v1/contacts', key, { phone: newPhone() })).status === 200, 15_000);
    const recoveredMs = Date.now() - restored;
    const after = await Promise.all(everyKind());
    console.info(
      `[postgresOutage ${label}] requests during the outage: ${answers.length}, clean 503 unavailable: ${answers.length - unclean.length}, ` +
        `other 5xx: ${unclean.filter((answer) => answer.status >= 500).length}, slowest: ${Math.round(slowest.ms)} ms (${slowest.what}), ` +
        `readyz ${ready.status} in ${Math.round(ready.ms)} ms; answering 200 again ${recoveredMs} ms after the database came back`,
    );
    expect(unclean).toStrictEqual([]);
    expect(slowest.ms).toBeLessThan(boundMs);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toStrictEqual({ ok: false, storage: 'unavailable', queue: 'ok' });
    expect(after.filter((answer) => answer.status >= 300)).toStrictEqual([]);
    expect((await readyz()).status).toBe(200);
  };

  beforeAll(async () => {
    database = await createPostgresDatabase();
    const real = new URL(database.url);
    proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    web = await startWeb({ ...baseEnv, DATABASE_URL: viaProxy.toString() });
    const http = client(web.url);
    key = await http.newKey('pg-outage');
    const hook = await http.api(key)('POST', '/hooks', { event: 'new_contact', target_url: 'https://127.0.0.1:9/none' });
    hookId = hook.body.id;
  });

  afterAll(async () => {
    await stopAllProcesses();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 unavailable within 5 s while connections are refused, and recovers by itself', async () => {
    await warmPool();
    proxy.cut();
    const answers: Answer[] = [];
    // At once (the pool's connections die together), then one by one.
    answers.push(...(await Promise.all([...everyKind(), ...everyKind(), ...everyKind()])));
    for (let round = 0; round < 3; round++) for (const request of everyKind()) answers.push(await request);
    await checkOutage('refused', answers, await readyz(), 5000);
  });

  it('answers 503 unavailable within the query timeout during a silent partition, and recovers by itself', async () => {
    await warmPool();
    proxy.stall();
    // Requests on pooled connections wait for query_timeout (10 s); new connections for the connect
    // timeout (3 s). One that waits for a free connection (the pool is full of stalled ones) waits
    // at most the connect timeout for it, then at most query_timeout for its query: 13 s in all.
    const [answers, ready] = await Promise.all([Promise.all([...everyKind(), ...everyKind()]), readyz()]);
    answers.push(...(await Promise.all(everyKind())));
    await checkOutage('silent', answers, ready, 14_000);
  });
});
