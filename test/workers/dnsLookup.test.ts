import { lookup } from 'node:dns/promises';
import { pbkdf2 } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsLookup } from '../../src/workers/dnsLookup.js';
import { createPoster } from '../../src/workers/poster.js';
import { startDnsServer } from '../support/dnsServer.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createTestCertificate } from '../support/tls.js';

/** Keeps all of libuv's default four pool threads busy for a while, as slow getaddrinfo calls would; resolves when the first is free. */
const occupyThreadPool = () => Promise.race(Array.from({ length: 4 }, () => new Promise((resolve) => pbkdf2('x', 'salt', 1_500_000, 32, 'sha256', resolve))));

/**
 * Target names resolve through c-ares against real (local) DNS servers: off libuv's thread pool,
 * with a cache and a timeout, so one account's slow DNS never holds back another's deliveries.
 */
describe('resolving target names', () => {
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  beforeAll(async () => {
    dns = await startDnsServer({
      'fast.hooks.test': { address: '127.0.0.1', ttlSeconds: 60 },
      'cached.hooks.test': { address: '127.0.0.1', ttlSeconds: 60 },
      'slow.hooks.test': { address: '127.0.0.1', delayMs: 1_500 },
      'silent.hooks.test': { address: '127.0.0.1', delayMs: Number.POSITIVE_INFINITY },
    });
  });
  afterAll(async () => {
    await dns?.close();
  });

  const resolver = (timeoutMs = 3_000) => createDnsLookup({ timeoutMs, servers: [dns.server] });

  it('answers from the cache within the TTL, asking the server once', async () => {
    const lookup = resolver();
    expect(await lookup.resolve('cached.hooks.test')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
    await lookup.resolve('CACHED.hooks.test.');
    await Promise.all([lookup.resolve('cached.hooks.test'), lookup.resolve('cached.hooks.test')]);
    expect(dns.queries('cached.hooks.test')).toBe(2); // one A and one AAAA query, once
  });

  it('resolves a name while another name waits on a slow server', async () => {
    const lookup = resolver();
    const order: string[] = [];
    await Promise.all([lookup.resolve('slow.hooks.test').then(() => order.push('slow')), lookup.resolve('fast.hooks.test').then(() => order.push('fast'))]);
    expect(order).toStrictEqual(['fast', 'slow']);
  });

  it('resolves while every libuv pool thread is busy, where dns.lookup waits for one', async () => {
    const lookupOf = resolver();
    const order: string[] = [];
    const busy = occupyThreadPool().then(() => order.push('a pool thread free'));
    await Promise.all([busy, lookupOf.resolve('fast.hooks.test').then(() => order.push('c-ares')), lookup('localhost').then(() => order.push('dns.lookup'))]);
    expect(order).toStrictEqual(['c-ares', 'a pool thread free', 'dns.lookup']);
  });

  it('gives up on a server that never answers, with a DNS error', async () => {
    await expect(resolver(400).resolve('silent.hooks.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('answers localhost names with loopback, without asking DNS (RFC 6761)', async () => {
    expect((await resolver().resolve('api.localhost')).map((a) => a.address)).toStrictEqual(['127.0.0.1', '::1']);
    expect(dns.queries('api.localhost')).toBe(0);
  });

  describe('delivering to a name', () => {
    let receiver: Receiver;
    beforeAll(async () => {
      receiver = await startReceiver();
    });
    afterAll(async () => {
      await receiver?.close();
    });
    const post = async (allowPrivateNetworks: boolean) => {
      const poster = createPoster({
        timeoutMs: 3_000,
        allowPrivateNetworks,
        connect: { ca: createTestCertificate().cert },
        dns: { timeoutMs: 2_000, servers: [dns.server] },
      });
      try {
        return await poster.post(`https://fast.hooks.test:${receiver.port}/named`, '{}', { 'content-type': 'application/json' });
      } finally {
        await poster.close();
      }
    };

    it('connects to the address the DNS server gave', async () => {
      expect(await post(true)).toMatchObject({ kind: 'response', status: 200 });
      expect(receiver.requests.at(-1)?.headers.host).toBe(`fast.hooks.test:${receiver.port}`);
    });

    it('refuses a name that resolves to a private address when the guard is on', async () => {
      const before = receiver.requests.length;
      expect(await post(false)).toMatchObject({ kind: 'refused', error: 'private_address' });
      expect(receiver.requests.length).toBe(before);
    });
  });
});
