import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CONNECTION_ALLOWANCE_MS } from '../../src/domain/pacing.js';
import { createPoster, type Poster } from '../../src/workers/poster.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startSlowHandshakes } from '../support/slowHandshakes.js';
import { createTestCertificate } from '../support/tls.js';

const HANDSHAKE_DELAY_MS = 400;

/**
 * A paced POST must start (its first byte) by the time its departure allows, or not at all: the
 * departures after it are spaced for no more (src/domain/pacing.ts). Over a real HTTPS receiver,
 * reached through a hop that makes its handshakes HANDSHAKE_DELAY_MS slower.
 */
describe('a POST starts by its deadline or is not sent', () => {
  const { cert: ca } = createTestCertificate();
  let receiver: Receiver;
  let slow: Awaited<ReturnType<typeof startSlowHandshakes>>;
  let poster: Poster;
  const received = (path: string) => receiver.requests.filter((request) => request.path === path).length;
  /** A POST that must start within `withinMs`, allowed what the poster says its connection may take. */
  const post = (url: string, withinMs?: number) =>
    poster.post(
      url,
      '{}',
      { 'content-type': 'application/json' },
      withinMs === undefined ? undefined : { by: Date.now() + withinMs, connectionAllowanceMs: poster.connectionAllowance(url) },
    );

  beforeAll(async () => {
    receiver = await startReceiver({ respond: () => ({ status: 200, body: 'ok' }) });
    slow = await startSlowHandshakes(Number(new URL(receiver.url).port), HANDSHAKE_DELAY_MS);
    poster = createPoster({ timeoutMs: 5_000, allowPrivateNetworks: true, connect: { ca } });
  });
  afterAll(async () => {
    await poster?.close();
    await slow?.close();
    await receiver?.close();
  });

  it('sends nothing when the connection is ready only after the start deadline, and allows that host longer next time', async () => {
    const url = `${slow.url}/slow`;
    expect(poster.connectionAllowance(url)).toBe(NEW_CONNECTION_ALLOWANCE_MS);
    expect(await post(url, 100)).toMatchObject({ kind: 'late' });
    await sleep(HANDSHAKE_DELAY_MS + 200);
    expect(received('/slow')).toBe(0);
    // The next POST there is taken to open a connection, with twice the allowance.
    expect(poster.connectionAllowance(url)).toBe(2 * NEW_CONNECTION_ALLOWANCE_MS);

    // Given a start deadline past the handshake, it is sent, once.
    expect(await post(url, HANDSHAKE_DELAY_MS + 1_000)).toMatchObject({ kind: 'response', status: 200 });
    expect(received('/slow')).toBe(1);
    expect(poster.connectionAllowance(url)).toBe(0);
  });

  it('doubles a host allowance once for many POSTs late at once with the same allowance', async () => {
    const another = await startSlowHandshakes(Number(new URL(receiver.url).port), HANDSHAKE_DELAY_MS);
    try {
      const url = `${another.url}/burst`;
      expect(poster.connectionAllowance(url)).toBe(NEW_CONNECTION_ALLOWANCE_MS);
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => post(url, 50)));
      expect(outcomes.map((outcome) => outcome.kind)).toStrictEqual(Array(5).fill('late'));
      expect(poster.connectionAllowance(url)).toBe(2 * NEW_CONNECTION_ALLOWANCE_MS);
      await sleep(HANDSHAKE_DELAY_MS + 200);
      expect(received('/burst')).toBe(0);
    } finally {
      await another.close();
    }
  });

  it('sends nothing on an open connection either once its start deadline has passed, and without a deadline sends', async () => {
    const url = `${receiver.url}/open`;
    expect(await post(url)).toMatchObject({ kind: 'response', status: 200 });
    expect(poster.connectionAllowance(url)).toBe(0);
    expect(await post(url, -1)).toMatchObject({ kind: 'late' });
    expect(await post(url, 1_000)).toMatchObject({ kind: 'response', status: 200 });
    await sleep(200);
    expect(received('/open')).toBe(2);
  });
});
