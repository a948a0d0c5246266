import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { isPublicAddress } from '../domain/addressPolicy.js';
import { IDLE_CONNECTION_MS } from '../domain/pacing.js';
import { createDnsLookup, lookupFunction, type DnsLookup, type DnsOptions } from './dnsLookup.js';
import { trustListenCertificates } from './listenTrust.js';
import { remembered } from './targetHosts.js';

export type PostOutcome =
  /** `retryAfter`: the answer's Retry-After header, read when it throttles (429, 503). */
  | { kind: 'response'; status: number; retryAfter?: string | undefined; durationMs: number }
  | { kind: 'refused'; error: 'private_address'; durationMs: number }
  | {
      kind: 'error';
      error: 'timeout' | 'connection_failed' | 'tls_error' | 'dns_failed' | 'response_too_large' | 'invalid_url';
      durationMs: number;
    };

export interface PosterOptions {
  /** Total time for the attempt: connect + headers + body read. */
  timeoutMs: number;
  /** Skip the address policy (dev/tests). */
  allowPrivateNetworks: boolean;
  /** Read at most this many response body bytes, then drop the connection. Default 4096. */
  maxResponseBytes?: number;
  /** Extra TLS options for tests; production relies on NODE_EXTRA_CA_CERTS. */
  connect?: { ca?: string | Buffer };
  /** Name resolution; the system's DNS servers with a 3 s timeout when absent. */
  dns?: DnsOptions;
  /** With allowPrivateNetworks: fingerprints of self-signed certificates trusted too (`contact-hooks listen`'s). */
  trustedCertificates?: () => ReadonlySet<string>;
}

export interface Poster {
  /** One attempt. `onStart` is called as its first byte is about to leave: after any handshake, never if none leaves. */
  post(url: string, body: string, headers: Record<string, string>, onStart?: () => void): Promise<PostOutcome>;
  /** Whether a POST to this URL would likely open a connection: no answer from its host in IDLE_CONNECTION_MS. */
  needsConnection(url: string): boolean;
  close(): Promise<void>;
}

/**
 * undici starts a request on its connection (onRequestStart) just before it writes it, after any
 * handshake: this handler tells `started` then, and passes everything on to the request's own.
 */
class NotingStart implements Dispatcher.DispatchHandler {
  constructor(
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly started: () => void,
  ) {}
  onRequestStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>) {
    this.started();
    this.handler.onRequestStart?.(...args);
  }
  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>) {
    this.handler.onRequestUpgrade?.(...args);
  }
  onResponseStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>) {
    this.handler.onResponseStart?.(...args);
  }
  onResponseData(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseData']>>) {
    this.handler.onResponseData?.(...args);
  }
  onResponseEnd(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>) {
    this.handler.onResponseEnd?.(...args);
  }
  onResponseError(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseError']>>) {
    this.handler.onResponseError?.(...args);
  }
}

// Interceptors are given handlers of undici's current interface (onRequestStart, onResponse*).
const notingStart =
  (started: () => void): Dispatcher.DispatcherComposeInterceptor =>
  (dispatch) =>
  (options, handler) =>
    dispatch(options, new NotingStart(handler, started));

/** Raised (inside the connector) when a target resolves or connects to a non-public address. */
export class PrivateAddressError extends Error {
  readonly code = 'ERR_PRIVATE_ADDRESS';
  constructor(readonly address: string) {
    super(`refusing to connect to non-public address ${address}`);
  }
}

// All records are checked, not just the first: with autoSelectFamily Node may try every one
// of them, and a name mixing public and private records is itself a rebinding smell.
const refuseNonPublic = (addresses: ReadonlyArray<{ address: string }>) => {
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new PrivateAddressError(refused.address);
};

/**
 * Connector that only hands undici sockets whose peer is a public address. The lookup guard
 * stops DNS names (the resolved address is the one connected to, so rebinding cannot slip
 * between check and use); the remoteAddress check covers literal-IP hosts, for which Node
 * never calls lookup. Exported so tests can reach each check on its own.
 */
export function createGuardedConnector(options: buildConnector.BuildOptions, dns: DnsLookup): buildConnector.connector {
  const base = buildConnector({ ...options, lookup: lookupFunction(dns, refuseNonPublic) });
  return (connectOptions, callback) => {
    base(connectOptions, (err, socket) => {
      if (err) return callback(err, null);
      const remote = socket?.remoteAddress;
      if (!socket || remote === undefined || !isPublicAddress(remote)) {
        socket?.destroy();
        return callback(new PrivateAddressError(remote ?? 'unknown'), null);
      }
      callback(null, socket);
    });
  };
}

export function createPoster(options: PosterOptions): Poster {
  const maxResponseBytes = options.maxResponseBytes ?? 4096;
  const dns = createDnsLookup(options.dns ?? { timeoutMs: 3_000 });
  const connectOptions: buildConnector.BuildOptions = { ...options.connect, timeout: options.timeoutMs };
  // No retry or redirect interceptor is composed onto this Agent, so each post() is one attempt.
  // No per-origin socket cap: many subscriptions share one host (hooks.zapier.com), and a cap
  // would let one slow or dead target there hold back all the others. Total parallel POSTs are
  // already bounded by the worker's concurrency.
  const agent = new Agent({
    connect: options.allowPrivateNetworks
      ? developmentConnect({ ...connectOptions, lookup: lookupFunction(dns, () => {}) }, options.trustedCertificates)
      : createGuardedConnector(connectOptions, dns),
  });

  // When each host last answered this process: its connection is likely still open for a while.
  const lastAnswered = new Map<string, number>();
  const answered = (origin: string) => {
    const now = Date.now();
    if (lastAnswered.size > 10_000) for (const [key, at] of lastAnswered) if (now - at > IDLE_CONNECTION_MS) lastAnswered.delete(key);
    lastAnswered.set(origin, now);
  };

  async function attempt(url: URL, body: string, headers: Record<string, string>, onStart: (() => void) | undefined): Promise<PostOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    if (!options.allowPrivateNetworks && isLiteralNonPublicHost(url)) {
      return { kind: 'refused', error: 'private_address', durationMs: elapsed() };
    }
    // One signal bounds connect, headers and body together, so a dribbling target is cut too. Its
    // timer is cleared once the attempt is over: AbortSignal.timeout's would live (and fire, making
    // an error nobody reads) for the whole timeout after every POST.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), options.timeoutMs);
    try {
      const response = await request(url, {
        dispatcher: onStart ? agent.compose(notingStart(onStart)) : agent,
        method: 'POST',
        body,
        headers,
        signal: timeout.signal,
      });
      // Draining a small body lets the socket go back to the pool; leaving the loop early
      // destroys the body (and its socket), so a huge response is never buffered.
      let received = 0;
      for await (const chunk of response.body) {
        received += (chunk as Buffer).length;
        if (received > maxResponseBytes) break;
      }
      answered(url.origin);
      const retryAfter = response.headers['retry-after'];
      return { kind: 'response', status: response.statusCode, retryAfter: [retryAfter].flat()[0], durationMs: elapsed() };
    } catch (err) {
      const outcome = classifyError(err);
      return outcome === 'private_address'
        ? { kind: 'refused', error: outcome, durationMs: elapsed() }
        : { kind: 'error', error: outcome, durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async post(url, body, headers, onStart) {
      const parsed = parseTarget(url);
      if (!parsed) return { kind: 'error', error: 'invalid_url', durationMs: 0 };
      return attempt(parsed, body, headers, onStart);
    },
    needsConnection(url) {
      const origin = originOf(url);
      return origin === undefined || !(Date.now() - (lastAnswered.get(origin) ?? 0) < IDLE_CONNECTION_MS);
    },
    close: () => agent.close(),
  };
}

/** The SSRF guard lifted: every address, and the receivers' certificates beside the usual CAs. */
const developmentConnect = (options: buildConnector.BuildOptions, trusted: PosterOptions['trustedCertificates']) =>
  trusted ? trustListenCertificates(options, trusted) : options;

/** A target URL's origin (undefined when it is none we POST to), asked of every delivery before its gate. */
const originOf = remembered((url) => parseTarget(url)?.origin);

function parseTarget(url: string): URL | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

// The WHATWG parser has already normalised odd IPv4 spellings (2130706433, 0x7f.1) to dotted quads.
function isLiteralNonPublicHost(url: URL): boolean {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) !== 0 && !isPublicAddress(host);
}

type Classified = Exclude<PostOutcome, { kind: 'response' }>['error'];

function classifyError(err: unknown): Classified {
  if (err instanceof PrivateAddressError) return 'private_address';
  const { name, code } = (err ?? {}) as { name?: string; code?: unknown };
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  if (typeof code !== 'string') return 'connection_failed';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_ABORTED':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'ENODATA':
    case 'ETIMEOUT': // c-ares: the DNS server did not answer in time
    case 'ESERVFAIL':
    case 'EREFUSED':
      return 'dns_failed';
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'response_too_large';
    case 'EPROTO':
      return 'tls_error';
  }
  // OpenSSL verification codes (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, ...) and Node's ERR_TLS_*/ERR_SSL_*.
  return /CERT|TLS|SSL/.test(code) ? 'tls_error' : 'connection_failed';
}
