import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../support/stack.js';
import { freePort, startProcess, waitUntil, withPostgresAndRedis } from '../support/processes.js';

/** What a GET of /metrics on host:port gives: the status, or the connection error's code. */
const scrape = (host: string, port: number) =>
  fetch(`http://${host}:${port}/metrics`).then(
    (response) => response.status,
    (error: { cause?: { code?: string } }) => error.cause?.code ?? 'failed',
  );

/**
 * A worker's metrics port has no login, so it listens on METRICS_HOST (loopback by default), not
 * on HOST, which is every interface by default. 127.0.0.2 stands for "another address of this
 * machine": a socket bound to 127.0.0.1 does not accept it, one bound to every interface does.
 */
describe.runIf(withPostgresAndRedis)('a worker’s metrics port', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', workers: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('listens on 127.0.0.1 only by default, even with HOST left at every interface', async () => {
    const port = await freePort();
    const worker = startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port) });
    await waitUntil(
      async () => (await scrape('127.0.0.1', port)) === 200,
      15_000,
      () => worker.output(),
    );
    expect(await scrape('127.0.0.2', port)).toBe('ECONNREFUSED');
  });

  it('listens where METRICS_HOST says', async () => {
    const port = await freePort();
    const worker = startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port), METRICS_HOST: '127.0.0.2' });
    await waitUntil(
      async () => (await scrape('127.0.0.2', port)) === 200,
      15_000,
      () => worker.output(),
    );
    expect(await scrape('127.0.0.1', port)).toBe('ECONNREFUSED');
  });
});
