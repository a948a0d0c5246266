import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPoster, type Poster } from '../../src/workers/poster.js';
import { createTestCertificate } from '../support/tls.js';

/**
 * A development server trusts the self-signed certificates of `contact-hooks listen` receivers
 * by fingerprint (src/workers/listenTrust.ts). Every connection must show the certificate: a
 * second connection that resumed the first one's TLS session would show none, and be refused.
 */
describe('pinned listen certificates', () => {
  const { cert, key } = createTestCertificate();
  let server: Server;
  let url: string;
  let poster: Poster;

  beforeAll(async () => {
    // Connection: close: each POST opens a new connection, as after an idle receiver's close.
    server = createServer({ cert, key }, (request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { connection: 'close' }).end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const fingerprints = new Set([new X509Certificate(cert).fingerprint256]);
    poster = createPoster({ timeoutMs: 2_000, allowPrivateNetworks: true, trustedCertificates: () => fingerprints });
  });
  afterAll(async () => {
    await poster?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('trusts the pinned certificate on every new connection, not only the first', async () => {
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await poster.post(url, '{}', { 'content-type': 'application/json' }));
    expect(outcomes.map((outcome) => (outcome.kind === 'response' ? outcome.status : outcome.error))).toStrictEqual([200, 200, 200]);
  });
});
