import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

export interface DnsOptions {
  /** Longest one name may take to resolve, all tries together. */
  timeoutMs: number;
  /** host or host:port of DNS servers; the system's (/etc/resolv.conf) when absent. */
  servers?: string[] | undefined;
}

/** Answers are kept for their TTL, at most this long, so a changed record is seen soon enough. */
const MAX_CACHE_MS = 5 * 60_000;
const MIN_CACHE_MS = 1_000;
const TRIES = 2;

type Answer = { addresses: LookupAddress[]; expiresAt: number };

const LOOPBACK: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Resolves target names with c-ares (dns.Resolver) rather than dns.lookup: dns.lookup runs
 * getaddrinfo on libuv's four-thread pool, where one account's slow DNS would queue everyone's
 * lookups (and file I/O). Answers are cached for their TTL; concurrent lookups of one name share
 * one query. `localhost` names are loopback by definition (RFC 6761) and never asked of DNS.
 */
export function createDnsLookup(options: DnsOptions) {
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / TRIES)), tries: TRIES });
  if (options.servers?.length) resolver.setServers(options.servers);
  const cache = new Map<string, Answer>();
  const pending = new Map<string, Promise<LookupAddress[]>>();

  async function query(hostname: string): Promise<LookupAddress[]> {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname, { ttl: true }), resolver.resolve6(hostname, { ttl: true })]);
    const records = [
      ...(v4.status === 'fulfilled' ? v4.value.map((record) => ({ ...record, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((record) => ({ ...record, family: 6 })) : []),
    ];
    if (records.length === 0) {
      const failure = [v4, v6].find((result) => result.status === 'rejected');
      throw failure?.status === 'rejected' ? failure.reason : Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' });
    }
    const ttlMs = Math.min(...records.map((record) => record.ttl * 1000));
    const addresses = records.map(({ address, family }) => ({ address, family }));
    cache.set(hostname, { addresses, expiresAt: Date.now() + Math.min(Math.max(ttlMs, MIN_CACHE_MS), MAX_CACHE_MS) });
    return addresses;
  }

  /** Every address of a name: cached, shared with concurrent callers, or asked of DNS. */
  async function resolve(name: string): Promise<LookupAddress[]> {
    const hostname = name.toLowerCase().replace(/\.$/, '');
    if (hostname === 'localhost' || hostname.endsWith('.localhost')) return LOOPBACK;
    const cached = cache.get(hostname);
    if (cached && cached.expiresAt > Date.now()) return cached.addresses;
    let answer = pending.get(hostname);
    if (!answer) {
      answer = query(hostname).finally(() => pending.delete(hostname));
      pending.set(hostname, answer);
    }
    return answer;
  }

  return { resolve };
}

export type DnsLookup = ReturnType<typeof createDnsLookup>;

/**
 * net.connect's `lookup` hook over a DnsLookup. `check` sees every address first, and may throw
 * to refuse the name (the SSRF policy). Node never calls this for a literal IP.
 */
export function lookupFunction(dns: DnsLookup, check: (addresses: LookupAddress[]) => void): LookupFunction {
  return (hostname, options, callback) => {
    dns
      .resolve(hostname)
      .then((all) => {
        check(all);
        const addresses = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (addresses.length === 0) throw Object.assign(new Error(`no IPv${options.family} address for ${hostname}`), { code: 'ENOTFOUND' });
        return addresses;
      })
      .then(
        (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
        (error: NodeJS.ErrnoException) => callback(error, ''),
      );
  };
}
