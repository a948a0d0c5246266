import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { alertExpressions, metricNames, panelExpressions, sampleValue, scrapedNames } from '../support/opsFiles.js';
import { freePort, startProcess, waitUntil, withPostgresAndRedis, type ServiceProcess } from '../support/processes.js';
import { startStack } from '../support/stack.js';

/** A GET of /metrics: its text, or undefined while the process does not answer it yet. */
const scrape = (url: string, token?: string) =>
  fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(
    async (response) => (response.ok ? response.text() : undefined),
    () => undefined,
  );

/**
 * The production shape, a web process and a worker on PostgreSQL and Redis, scraped as
 * Prometheus scrapes them: every metric an alert rule or a dashboard panel in ops/ names is
 * exposed by one of them, so no rule or panel watches a name that does not exist.
 */
describe.runIf(withPostgresAndRedis)('the metrics ops/ names, on a running web and worker', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let worker: ServiceProcess;
  let workerUrl: string;
  let web = '';
  let fromWorker = '';

  beforeAll(async () => {
    // Both processes reach PostgreSQL through a proxy the test can stall (a partition).
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    stack = await startStack({
      mode: 'workers',
      workers: 0,
      serviceDatabaseUrl: (url) => Object.assign(new URL(url), { host: `127.0.0.1:${proxy.port}` }).toString(),
    });
    const port = await freePort();
    workerUrl = `http://127.0.0.1:${port}`;
    worker = startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port) });
    // The web process sees the worker once its BullMQ worker has connected.
    await waitUntil(
      async () => {
        web = (await scrape(stack.web.url, INTERNAL_TOKEN)) ?? '';
        fromWorker = (await scrape(workerUrl)) ?? '';
        return fromWorker !== '' && sampleValue(web, 'contact_hooks_workers_consuming') === 1;
      },
      20_000,
      () => `${worker.output()}\n${web}`,
    );
  });
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it('exposes every metric an alert rule or a dashboard panel names', () => {
    const exposed = new Set([...scrapedNames(web), ...scrapedNames(fromWorker)]);
    const named = [...alertExpressions(), ...panelExpressions()].flatMap(([where, expr]) => metricNames(expr).map((name) => ({ where, name })));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ name }) => !exposed.has(name))).toEqual([]);
  });

  it('reports PostgreSQL and Redis ready from both processes', () => {
    for (const text of [web, fromWorker]) {
      expect(sampleValue(text, 'contact_hooks_ready{dependency="postgres"}')).toBe(1);
      expect(sampleValue(text, 'contact_hooks_ready{dependency="redis"}')).toBe(1);
    }
  });

  it('reports PostgreSQL failing while it does not answer, without the scrape waiting on it, and ready again after', async () => {
    proxy.stall();
    try {
      const during = await Promise.all([scrape(stack.web.url, INTERNAL_TOKEN), scrape(workerUrl)]);
      for (const text of during) {
        expect(sampleValue(text ?? '', 'contact_hooks_ready{dependency="postgres"}')).toBe(0);
        expect(sampleValue(text ?? '', 'contact_hooks_ready{dependency="redis"}')).toBe(1);
      }
    } finally {
      proxy.restore();
    }
    const ready = async (url: string, token?: string) => sampleValue((await scrape(url, token)) ?? '', 'contact_hooks_ready{dependency="postgres"}') === 1;
    await waitUntil(async () => (await ready(stack.web.url, INTERNAL_TOKEN)) && (await ready(workerUrl)), 20_000);
  });

  it('counts workers from the web process only: a worker, which has no view of the others, reports none', () => {
    expect(sampleValue(web, 'contact_hooks_workers_consuming')).toBe(1);
    expect(scrapedNames(fromWorker).has('contact_hooks_workers_consuming')).toBe(false);
  });

  it('counts deliveries ending unknown from zero, so that the first one is an increase', () => {
    expect(sampleValue(fromWorker, 'webhook_deliveries_total{outcome="unknown"}')).toBe(0);
  });

  it('shows no worker consuming once the worker is gone', async () => {
    await worker.stop('SIGTERM');
    await waitUntil(async () => sampleValue((await scrape(stack.web.url, INTERNAL_TOKEN)) ?? '', 'contact_hooks_workers_consuming') === 0, 20_000);
  });
});
