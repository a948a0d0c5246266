import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { buildTestApp, INTERNAL_TOKEN, newKey } from '../support/app.js';
import { engines, openTestStore } from '../support/databases.js';

/**
 * Property-based fuzzing of every /api/v1 and /internal/v1 route and /metrics, in-process on a real store:
 * whatever the method, path, query, headers and body, (1) the status is never 5xx, (2) an error
 * body is exactly `{"error": "<snake_case code>"}`, (3) a rejected request changes nothing in
 * the database. A valid API key and the internal token are used often enough to get past auth.
 */

/** Runs per route group; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const TABLES = ['contacts', 'hooks', 'api_keys', 'events', 'calls', 'deliveries'] as const;
const ERROR_CODE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

interface Route {
  methods: string[];
  path: string; // with :param placeholders
  fields: string[]; // body fields worth aiming at
  query?: string[];
}

/** Route groups, one test each. */
const GROUPS: Record<string, Route[]> = {
  'public contacts': [{ methods: ['POST'], path: '/api/v1/contacts', fields: ['phone', 'name', 'email'] }],
  'public hooks': [
    { methods: ['POST', 'GET'], path: '/api/v1/hooks', fields: ['event', 'target_url'] },
    { methods: ['DELETE'], path: '/api/v1/hooks/:hook_id', fields: [] },
    { methods: ['GET'], path: '/api/v1/hooks/:hook_id/deliveries', fields: [] },
  ],
  'public events': [{ methods: ['GET'], path: '/api/v1/events', fields: [], query: ['event', 'limit'] }],
  'internal keys': [
    { methods: ['POST', 'GET'], path: '/internal/v1/accounts/:account_id/keys', fields: ['source', 'name'] },
    { methods: ['DELETE'], path: '/internal/v1/keys/:key_id', fields: [] },
    { methods: ['POST'], path: '/internal/v1/keys/:key_id/rotate', fields: [] },
  ],
  'internal contacts': [
    { methods: ['GET', 'PATCH'], path: '/internal/v1/accounts/:account_id/contacts/:contact_id', fields: ['name', 'email'] },
    { methods: ['POST'], path: '/internal/v1/accounts/:account_id/contacts/sync', fields: ['phone', 'name', 'email', 'source'] },
  ],
  'public identity': [{ methods: ['GET'], path: '/api/v1/me', fields: [] }],
  'operator metrics': [{ methods: ['GET'], path: '/metrics', fields: [] }],
  'internal calls': [
    {
      methods: ['POST'],
      path: '/internal/v1/accounts/:account_id/calls',
      fields: ['conversation_id', 'channel', 'outcome', 'spam', 'caller_name', 'caller_number', 'summary'],
    },
  ],
};
const ALL_ROUTES = Object.values(GROUPS).flat();

/** Header values a real HTTP parser lets through: visible ASCII, space, tab and obs-text. */
const headerValue = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});

const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', 'null', '0', '-1', 'true', '[]', '{}', '😀', 'é', '\u202e', 'a'.repeat(300), 'x'.repeat(70_000)),
);

/** Strings that the service treats specially, field by field, so runs reach past validation. */
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  phone: fc.oneof(
    fc.constantFrom('+14155550123', '(415) 555-0199', '415.555.0100', '+447700900123', '+1', '123', 'not a phone', '+1 415 555 01 23 45'),
    fc.stringMatching(/^\+?[0-9 ()-]{1,20}$/),
  ),
  name: fc.oneof(fc.constantFrom('Ann', '  ', 'x'.repeat(257)), fc.string({ unit: 'grapheme', maxLength: 30 })),
  email: fc.oneof(fc.constantFrom('ann@example.com', 'a@b', '@', 'x'.repeat(250) + '@e.co'), fc.emailAddress()),
  event: fc.constantFrom('new_contact', 'new_conversation', 'missed_call', 'NEW_CONTACT', 'new_contact ', 'other'),
  target_url: fc.oneof(
    fc.constantFrom(
      'https://127.0.0.1/x',
      'http://example.com/h',
      'https://',
      'https://u:p@example.com/',
      'javascript:alert(1)',
      `https://e.com/${'a'.repeat(2100)}`,
      'https://e.com/a b',
    ),
    fc.webUrl(),
  ),
  source: fc.constantFrom('zapier', 'hubspot', 'HubSpot', '', '-x', 'a'.repeat(65), 'make.com'),
  conversation_id: fc.oneof({ weight: 6, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '') }),
  channel: fc.constantFrom('voice', 'voice', 'voice', 'sms', 'chat', 'fax', 'VOICE'),
  outcome: fc.constantFrom('answered', 'voicemail', 'hangup', 'busy'),
  spam: fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fc.constantFrom('false', 0, null) }),
  caller_name: fc.oneof({ weight: 6, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.constant('x'.repeat(257)) }),
  caller_number: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('+14155550103', '(415) 555-0104', '+44 7700 900123') },
    { weight: 2, arbitrary: fc.constantFrom('unknown', '', 'x'.repeat(65)) },
    { weight: 2, arbitrary: fc.stringMatching(/^\+?[0-9]{1,16}$/) },
  ),
  summary: fc.oneof({ weight: 6, arbitrary: fc.string({ maxLength: 50 }) }, { weight: 1, arbitrary: fc.constant('s'.repeat(16_385)) }),
  limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.constantFrom('', '1.5', 'abc', '1e2', '0x10', '3 ')),
};
const fieldValue = (field: string) => (plausible[field] ? fc.oneof({ weight: 8, arbitrary: plausible[field] }, { weight: 1, arbitrary: junk }) : junk);

function bodyFor(fields: string[]): fc.Arbitrary<string | undefined> {
  const shaped = fc
    .tuple(
      // Each field present most of the time (JSON.stringify drops the absent ones), so whole valid bodies occur.
      fc.record(Object.fromEntries(fields.map((field) => [field, fc.option(fieldValue(field), { nil: undefined, freq: 8 })]))),
      fc.dictionary(fc.string({ maxLength: 8 }), junk, { maxKeys: 2 }),
    )
    .map(([known, extra]) => JSON.stringify({ ...extra, ...known }));
  const stringified = (value: unknown) => {
    try {
      return JSON.stringify(value) ?? '';
    } catch {
      return '';
    }
  };
  return fc.oneof(
    { weight: 16, arbitrary: shaped },
    { weight: 2, arbitrary: fc.json() },
    { weight: 1, arbitrary: fc.anything().map(stringified) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }) },
    { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 200_000 }).map((n) => JSON.stringify({ [fields[0] ?? 'x']: 'x'.repeat(n) })) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 50_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', 'null', '"x"', '{"phone": "\\u0000"}', '{"__proto__": {"x": 1}}', '{"a":1,"a":2}', '{') },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/json; charset=latin1',
      'application/json;',
      'application/jsonx',
      'application/vnd.api+json',
      'text/plain',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=zz',
      'application/octet-stream',
      '',
      '*/*',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/** encodeURIComponent, except that a lone surrogate (which it refuses) becomes U+FFFD. */
const escapeUri = (value: string) => encodeURIComponent(value.replace(/\p{Cs}/gu, '\ufffd'));

const PATH_JUNK = [
  '..',
  '.',
  '%2e%2e',
  '%2F',
  '%00',
  '%',
  '%zz',
  '%ff',
  'a'.repeat(129),
  'a'.repeat(5000),
  '😀',
  'é',
  ' ',
  '\u0000',
  '\\',
  ';',
  '*',
  'null',
  '%20',
  '?x=1',
  '#x',
];

/** The ids and names the fixtures hold; mixed with junk so some runs hit real rows. */
interface Known {
  apiKey: string;
  hookIds: string[];
  contactIds: string[];
  /** Keys that may be revoked without costing the other runs their valid key. */
  spareKeyIds: string[];
  accountId: string;
}

function paramValue(name: string, known: Known): fc.Arbitrary<string> {
  const real: Record<string, string[]> = {
    hook_id: known.hookIds,
    contact_id: known.contactIds,
    key_id: known.spareKeyIds,
    account_id: [known.accountId, 'other-account'],
  };
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(real[name] ?? ['x'])) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...PATH_JUNK) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  );
}

/** Mostly the credential the path takes (`Bearer` key, or the internal token off /api), so runs get past auth. */
const authorization = (known: Known, path = '') => {
  const right = path.startsWith('/api/') ? known.apiKey : INTERNAL_TOKEN;
  const wrong = right === INTERNAL_TOKEN ? known.apiKey : INTERNAL_TOKEN;
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${right}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${wrong}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'Bearer',
        'Bearer ',
        `bearer ${known.apiKey}`,
        `Bearer  ${known.apiKey}`,
        `Bearer ${known.apiKey}x`,
        `Bearer ${known.apiKey.slice(0, -1)}`,
        `Bearer chk_${'A'.repeat(43)}`,
        `Token ${known.apiKey}`,
        `Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}`,
        `Basic ${Buffer.from(INTERNAL_TOKEN).toString('base64')}`,
        'Basic %%%',
        `Bearer ${INTERNAL_TOKEN}, Bearer ${known.apiKey}`,
        `Bearer ${'x'.repeat(8000)}`,
      ),
    },
    { weight: 1, arbitrary: headerValue },
  );
};

const queryString = (route: Route) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    {
      weight: 4,
      arbitrary: fc
        .array(
          fc.tuple(
            fc.oneof(fc.constantFrom(...(route.query ?? ['event']), 'limit', 'event', '__proto__', 'event[]'), fc.string({ maxLength: 6 })),
            fc.oneof(plausible.event!.map(String), plausible.limit!.map(String), fc.string({ unit: 'grapheme', maxLength: 20 })),
          ),
          { maxLength: 4 },
        )
        .map((pairs) => `?${pairs.map(([key, value]) => `${escapeUri(key)}=${escapeUri(value)}`).join('&')}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?',
        '?&&==',
        '?event',
        '?event=%',
        '?event=%zz&limit=%ff',
        '?limit=1&limit=2&event=new_contact&event=missed_call',
        `?${'a=1&'.repeat(2000)}`,
      ),
    },
  );

/** A request aimed at one of the routes: usually its own method, sometimes any other. */
function requestFor(routes: Route[], known: Known, encodeParams = true): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain((route) => {
    const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
    return fc
      .record({
        method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...route.methods) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        params: fc.tuple(...names.map((name) => fc.tuple(fc.constant(name), paramValue(name, known), fc.boolean()))),
        query: queryString(route),
        authorization: authorization(known, route.path),
        contentType,
        accept: fc.constantFrom(undefined, 'application/json', 'text/html', '*/*', 'application/xml'),
        payload: bodyFor(route.fields),
      })
      .map(({ method, params, query, authorization, contentType, accept, payload }) => {
        let url = route.path;
        for (const [name, value, encode] of params) url = url.replace(`:${name}`, encodeParams && encode ? escapeUri(value) : value);
        const headers: Record<string, string> = {};
        if (authorization !== undefined) headers.authorization = authorization;
        if (contentType !== undefined) headers['content-type'] = contentType;
        if (accept !== undefined) headers.accept = accept;
        return { method, url: url + query, headers, ...(payload === undefined ? {} : { payload }) };
      });
  });
}

/** Any path under the two prefixes, made of real and junk segments, with any method. */
function anyPath(known: Known): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    fc.constantFrom(
      'accounts',
      'keys',
      'rotate',
      'me',
      'contacts',
      'sync',
      'calls',
      'hooks',
      'deliveries',
      'events',
      known.accountId,
      ...known.hookIds,
      ...known.spareKeyIds,
    ),
    fc.constantFrom(...PATH_JUNK).map(escapeUri),
    fc.string({ maxLength: 12 }).map(escapeUri),
  );
  return fc
    .record({
      prefix: fc.constantFrom('/api/v1', '/internal/v1', '/api/v2', '/internal', '/api/v1/', '//api/v1'),
      segments: fc.array(segment, { maxLength: 5 }),
      method: fc.constantFrom(...METHODS),
      authorization: fc.oneof(authorization(known, '/api/'), authorization(known, '/internal/')),
      contentType,
      payload: bodyFor(['phone', 'event', 'target_url', 'source']),
    })
    .map(({ prefix, segments, method, authorization, contentType, payload }) => ({
      method,
      url: [prefix, ...segments].join('/'),
      headers: { ...(authorization === undefined ? {} : { authorization }), ...(contentType === undefined ? {} : { 'content-type': contentType }) },
      ...(payload === undefined ? {} : { payload }),
    }));
}

/** Row counts and a hash of every row of every table: equal snapshots mean nothing changed. */
async function snapshot(db: Database) {
  const columns = TABLES.map(
    (table) => `(SELECT count(*)::int || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM ${table} t) AS ${table}`,
  );
  const { rows } = await db.query<Record<string, string>>(`SELECT ${columns.join(', ')}`);
  return rows[0]!;
}

describe.each(engines())('fuzzing every route (%s)', (engine) => {
  let db: Database;
  let app: FastifyInstance;
  let cleanup: () => Promise<void>;
  let known: Known;
  const tally = { requests: 0, rejected: 0, statuses: new Map<number, number>() };

  /** Sends one request and checks the three properties. */
  const check = async (request: FuzzRequest, send: (request: FuzzRequest) => Promise<{ status: number; body: string }>) => {
    const before = await snapshot(db);
    const { status, body } = await send(request);
    tally.requests++;
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    const described = () => `${request.method} ${request.url.slice(0, 300)} -> ${status} ${body.slice(0, 300)}`;
    expect(status, described()).toBeLessThan(500);
    if (status < 400) return;
    tally.rejected++;
    if (request.method !== 'HEAD') {
      const parsed: unknown = JSON.parse(body);
      expect(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), described()).toBe(true);
      expect(Object.keys(parsed as object), described()).toStrictEqual(['error']);
      expect((parsed as { error: unknown }).error, described()).toMatch(ERROR_CODE);
    }
    expect(await snapshot(db), `database changed by a rejected request: ${described()}`).toStrictEqual(before);
  };
  const inject = async (request: FuzzRequest) => {
    const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
    return { status: response.statusCode, body: response.body };
  };

  let port: number | undefined;
  const listening = async () => {
    if (port === undefined) {
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as AddressInfo).port;
    }
    return port;
  };

  beforeAll(async () => {
    const opened = await openTestStore(engine);
    db = opened.db;
    cleanup = opened.cleanup;
    ({ app } = await buildTestApp(opened.store, { RATE_LIMIT_PER_MINUTE: '100000000' }));
    const main = await newKey(opened.store, 'acct-fuzz');
    const spares = await Promise.all([1, 2, 3].map(() => newKey(opened.store, 'acct-fuzz')));
    const post = (url: string, payload: unknown, authorization: string) =>
      app.inject({ method: 'POST', url, payload: payload as object, headers: { authorization } });
    const hooks = await Promise.all(
      ['new_contact', 'missed_call'].map((event) => post('/api/v1/hooks', { event, target_url: 'https://127.0.0.1/fuzz' }, `Bearer ${main.key}`)),
    );
    const contact = await post('/api/v1/contacts', { phone: '+14155550123', name: 'Fuzz' }, `Bearer ${main.key}`);
    await post(
      '/internal/v1/accounts/acct-fuzz/calls',
      { channel: 'voice', outcome: 'voicemail', spam: false, caller_name: 'A', caller_number: '+14155550100', summary: 's' },
      `Bearer ${INTERNAL_TOKEN}`,
    );
    await db.query(
      `INSERT INTO deliveries (id, event_id, hook_id, account_id, status, response_status, duration_ms)
       SELECT $1, (SELECT id FROM events LIMIT 1), $2, 'acct-fuzz', 'delivered', 200, 5`,
      [randomUUID(), hooks[0]!.json().id],
    );
    known = {
      apiKey: main.key,
      hookIds: hooks.map((hook) => hook.json().id),
      contactIds: [contact.json().contact_id],
      spareKeyIds: spares.map((spare) => spare.id),
      accountId: 'acct-fuzz',
    };
  });

  afterAll(async () => {
    console.info(
      `[fuzz ${engine}] requests: ${tally.requests}, rejected (>= 400): ${tally.rejected}, statuses: ${JSON.stringify(Object.fromEntries([...tally.statuses].sort(([a], [b]) => a - b)))}`,
    );
    await app?.close();
    await cleanup?.();
  });

  it.each(Object.keys(GROUPS))('%s', async (group) => {
    await fc.assert(
      fc.asyncProperty(requestFor(GROUPS[group]!, known), (request) => check(request, inject)),
      { numRuns: RUNS },
    );
  });

  it('any path and method under the prefixes', async () => {
    await fc.assert(
      fc.asyncProperty(anyPath(known), (request) => check(request, inject)),
      { numRuns: RUNS },
    );
  });

  it('raw, unnormalised paths over a real socket', async () => {
    // inject() normalises URLs (`..`, bad escapes); a real client need not.
    const port = await listening();
    const overSocket = (request: FuzzRequest) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        // Node's client refuses bytes outside 0x21-0xff in a path; those alone are escaped.
        const path = request.url.replace(/[^\u0021-\u00ff]/gu, escapeUri);
        const headers = { ...request.headers, ...(request.payload === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.payload)) }) };
        let answered = false;
        const outgoing = httpRequest({ host: '127.0.0.1', port, method: request.method, path, headers, agent: false }, (response) => {
          answered = true;
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          // The server may answer before it has read a large body it ignores (a GET's); Node's
          // client, still sending it, then sees the connection reset partway through a long answer
          // (a 150 kB /metrics). The answer is what came: its status, and the body as far as it
          // got (an error's few bytes always do). The reset itself is that 'error'; 'close' follows.
          response.on('error', () => {});
          response.on('close', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        outgoing.on('error', (error) => {
          if (!answered) reject(error);
        });
        // A request the server never finishes answering fails here, naming it, not at the test's timeout.
        outgoing.setTimeout(10_000, () => outgoing.destroy(new Error(`no answer within 10 s to ${JSON.stringify(request)}`)));
        outgoing.end(request.payload);
      });
    await fc.assert(
      // HEAD is left to the inject() runs: a refusal's body after a HEAD trips Node's client parser.
      fc.asyncProperty(requestFor(ALL_ROUTES, known, false), async (request) => {
        fc.pre(request.method !== 'HEAD');
        await check(request, overSocket);
      }),
      { numRuns: RUNS },
    );
  });

  it('requests the HTTP parser refuses', async () => {
    const port = await listening();
    const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
    const cases: Record<string, string | Buffer> = {
      'not HTTP': 'GARBAGE\r\n\r\n',
      'headers too large': head(['GET /api/v1/hooks HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`]),
      'bad content-length': head(['POST /api/v1/contacts HTTP/1.1', 'Host: x', 'Content-Length: abc']),
      'both lengths': head(['POST /api/v1/contacts HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Transfer-Encoding: chunked']) + '{}',
      'bad chunk': head(['POST /api/v1/contacts HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Transfer-Encoding: chunked']) + 'zz\r\n{}\r\n',
      'control character in a header': head(['GET /api/v1/hooks HTTP/1.1', 'Host: x', 'Authorization: Bearer \u0001']),
      'raw non-ASCII in the path': Buffer.concat([Buffer.from('GET /api/v1/hooks/'), Buffer.from([0xc3, 0xa9]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]),
      'body with no framing': head(['DELETE /api/v1/hooks/x HTTP/1.1', 'Host: x']) + '0',
    };
    const answers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(cases)) {
      const before = await snapshot(db);
      const reply = await new Promise<string>((resolve) => {
        let received = '';
        const socket = connect(port, '127.0.0.1', () => socket.end(raw));
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (received += chunk));
        socket.on('error', () => {});
        socket.on('close', () => resolve(received));
      });
      // The last response on the connection is the parser's refusal (an earlier one may be the request's own).
      const last = reply.slice(reply.lastIndexOf('HTTP/1.1 '));
      const status = Number(last.slice(9, 12));
      const body = last.slice(last.indexOf('\r\n\r\n') + 4);
      answers[name] = `${status} ${body}`;
      expect(status, `${name}: ${reply}`).toBeGreaterThanOrEqual(400);
      expect(status, `${name}: ${reply}`).toBeLessThan(500);
      expect(Object.keys(JSON.parse(body)), `${name}: ${reply}`).toStrictEqual(['error']);
      expect(JSON.parse(body).error, `${name}: ${reply}`).toMatch(ERROR_CODE);
      expect(await snapshot(db)).toStrictEqual(before);
    }
    console.info(`[fuzz ${engine}] refused by the HTTP parser: ${JSON.stringify(answers)}`);
  });
});
