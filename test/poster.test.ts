import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createGuardedConnector, createPoster, PrivateAddressError, type Poster } from '../src/workers/poster.js';
import { createDnsLookup } from '../src/workers/dnsLookup.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { startSlowHandshakes } from './support/slowHandshakes.js';
import { createTestCertificate } from './support/tls.js';

const { cert: ca, key } = createTestCertificate();
const body = JSON.stringify({ type: 'contact.created', data: { id: 'c_1' } });
const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_1' };
// Long enough for a retry or followed redirect to have shown up if the poster made one.
const settle = (): Promise<void> => sleep(200);

describe('poster against a real HTTPS receiver', () => {
  let receiver: Receiver;
  let poster: Poster;

  beforeAll(async () => {
    receiver = await startReceiver({
      respond: (req) => {
        const status = Number(req.path.match(/^\/status\/(\d+)/)?.[1] ?? 200);
        if (req.path === '/never') return { neverRespond: true };
        if (req.path === '/huge') return { body: Buffer.alloc(5 * 1024 * 1024, 'x') };
        if (status === 307 || status === 308) return { status, headers: { location: `${receiver.url}/redirect-target` } };
        return { status, body: 'ok' };
      },
    });
    poster = createPoster({ timeoutMs: 2000, allowPrivateNetworks: true, connect: { ca } });
  });

  afterAll(async () => {
    await poster.close();
    await receiver.close();
  });

  const requestsTo = (path: string): number => receiver.requests.filter((r) => r.path === path).length;

  it('delivers a 2xx as a response outcome with body and headers intact', async () => {
    const outcome = await poster.post(`${receiver.url}/hook/1`, body, headers);
    expect(outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(Number.isInteger(outcome.durationMs)).toBe(true);
    const received = receiver.requests.find((r) => r.path === '/hook/1');
    expect(received).toMatchObject({ method: 'POST', body });
    expect(received?.headers['webhook-id']).toBe('msg_1');
    expect(received?.headers['content-type']).toBe('application/json');
  });

  it('reports a 500 as a response and sends exactly one request', async () => {
    const outcome = await poster.post(`${receiver.url}/status/500`, body, headers);
    expect(outcome).toMatchObject({ kind: 'response', status: 500 });
    await settle();
    expect(requestsTo('/status/500')).toBe(1);
  });

  it.each([307, 308])('does not follow a %i redirect', async (status) => {
    const outcome = await poster.post(`${receiver.url}/status/${status}`, body, headers);
    expect(outcome).toMatchObject({ kind: 'response', status });
    await settle();
    expect(requestsTo(`/status/${status}`)).toBe(1);
    expect(requestsTo('/redirect-target')).toBe(0);
  });

  it('does not re-send on 421', async () => {
    const outcome = await poster.post(`${receiver.url}/status/421`, body, headers);
    expect(outcome).toMatchObject({ kind: 'response', status: 421 });
    await settle();
    expect(requestsTo('/status/421')).toBe(1);
  });

  it('cuts a target that never answers at timeoutMs', async () => {
    const fast = createPoster({ timeoutMs: 300, allowPrivateNetworks: true, connect: { ca } });
    try {
      const outcome = await fast.post(`${receiver.url}/never`, body, headers);
      expect(outcome).toMatchObject({ kind: 'error', error: 'timeout' });
      expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
      expect(outcome.durationMs).toBeLessThan(1500);
      expect(requestsTo('/never')).toBe(1);
    } finally {
      await fast.close();
    }
  });

  it('reads only the start of a 5 MB response body', async () => {
    const started = Date.now();
    const outcome = await poster.post(`${receiver.url}/huge`, body, headers);
    expect(outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('maps certificate failures to tls_error', async () => {
    const untrusting = createPoster({ timeoutMs: 2000, allowPrivateNetworks: true });
    try {
      expect(await untrusting.post(`${receiver.url}/tls`, body, headers)).toMatchObject({ kind: 'error', error: 'tls_error' });
      expect(requestsTo('/tls')).toBe(0);
    } finally {
      await untrusting.close();
    }
  });

  it('rejects unusable URLs without connecting', async () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/', '']) {
      expect(await poster.post(url, body, headers)).toMatchObject({ kind: 'error', error: 'invalid_url' });
    }
  });
});

describe('poster timeouts and connection errors', () => {
  it('cuts a target that dribbles its body at timeoutMs (total, not idle, timeout)', async () => {
    const server = createServer({ key, cert: ca }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const poster = createPoster({ timeoutMs: 300, allowPrivateNetworks: true, connect: { ca } });
    try {
      const outcome = await poster.post(`https://127.0.0.1:${port}/`, body, headers);
      expect(outcome).toMatchObject({ kind: 'error', error: 'timeout' });
      expect(outcome.durationMs).toBeLessThan(1500);
    } finally {
      await poster.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('maps a refused connection to connection_failed', async () => {
    const gone = await startReceiver();
    await gone.close();
    const poster = createPoster({ timeoutMs: 2000, allowPrivateNetworks: true, connect: { ca } });
    let started = 0;
    try {
      expect(await poster.post(`${gone.url}/`, body, headers, () => started++)).toMatchObject({ kind: 'error', error: 'connection_failed' });
      expect(started).toBe(0); // nothing left: no start to tell of
    } finally {
      await poster.close();
    }
  });

  it('tells when the first byte is about to leave: after the handshake, once', async () => {
    const receiver = await startReceiver();
    const HANDSHAKE_DELAY_MS = 300;
    const slow = await startSlowHandshakes(Number(new URL(receiver.url).port), HANDSHAKE_DELAY_MS);
    const poster = createPoster({ timeoutMs: 2000, allowPrivateNetworks: true, connect: { ca } });
    const starts: number[] = [];
    try {
      const posted = Date.now();
      expect(await poster.post(`${slow.url}/start`, body, headers, () => starts.push(Date.now()))).toMatchObject({ kind: 'response', status: 200 });
      expect(starts).toHaveLength(1);
      expect(starts[0]! - posted).toBeGreaterThanOrEqual(HANDSHAKE_DELAY_MS);
      expect(starts[0]!).toBeLessThanOrEqual(receiver.requests.find((request) => request.path === '/start')!.receivedAt);
    } finally {
      await poster.close();
      await slow.close();
      await receiver.close();
    }
  });
});

describe('poster SSRF policy', () => {
  let receiver: Receiver;
  let poster: Poster;

  beforeAll(async () => {
    receiver = await startReceiver();
    poster = createPoster({ timeoutMs: 2000, allowPrivateNetworks: false, connect: { ca } });
  });

  afterAll(async () => {
    await poster.close();
    await receiver.close();
  });

  it.each([
    'https://127.0.0.1:PORT/hook',
    'https://[::1]:PORT/hook',
    'https://[::ffff:127.0.0.1]:PORT/hook',
    'https://localhost:PORT/hook',
    'https://0x7f.1:PORT/hook',
    'http://2130706433/hook',
    'http://169.254.169.254/latest/meta-data/',
  ])('refuses %s without the receiver seeing a request', async (target) => {
    const outcome = await poster.post(target.replace('PORT', String(receiver.port)), body, headers);
    expect(outcome).toMatchObject({ kind: 'refused', error: 'private_address' });
    await settle();
    expect(receiver.requests).toHaveLength(0);
  });

  it('maps an unresolvable name to dns_failed', async () => {
    expect(await poster.post('https://nonexistent.invalid/hook', body, headers)).toMatchObject({
      kind: 'error',
      error: 'dns_failed',
    });
  });

  const connectOnce = (hostname: string, port: number): Promise<Error | null> => {
    const connect = createGuardedConnector({ ca, timeout: 2000 }, createDnsLookup({ timeoutMs: 2000 }));
    return new Promise((resolve) => {
      connect({ hostname, protocol: 'https:', port: String(port) }, (err, socket) => {
        socket?.destroy();
        resolve(err);
      });
    });
  };

  it('guarded connector refuses a name at lookup, before any connection attempt', async () => {
    const closed = await startReceiver();
    await closed.close();
    // Nothing listens there, so only the lookup guard can produce this error instead of ECONNREFUSED.
    const error = await connectOnce('localhost', closed.port);
    expect(error).toBeInstanceOf(PrivateAddressError);
  });

  it('guarded connector refuses a connected socket whose peer is private (literal IPs skip lookup)', async () => {
    const error = await connectOnce('127.0.0.1', receiver.port);
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect((error as PrivateAddressError).address).toBe('127.0.0.1');
  });
});
