import { describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from './support/app.js';
import { waitUntil, type ServiceProcess } from './support/processes.js';
import { stackModes, startStack } from './support/stack.js';

/** What Node prints for a process warning, deprecations included: `(node:PID) [CODE] XWarning: …`. */
const nodeWarnings = (service: ServiceProcess) =>
  service
    .output()
    .split('\n')
    .filter((line) => /^\(node:\d+\) /.test(line));

/**
 * Each process starts, serves, delivers and stops without a warning, on whichever Node runs the
 * suite (the processes are spawned with the suite's own `process.execPath`).
 */
describe.each(stackModes())('a clean start, %s', (mode) => {
  it('prints no Node warning from the web process (first-party API, docs and Bull Board mounted) or a worker', async () => {
    const stack = await startStack({ mode, workers: mode === 'workers' ? 1 : 0 });
    try {
      await stack.subscribe('/clean');
      await stack.newContacts(1);
      await waitUntil(() => stack.received('/clean').length === 1, 15_000);
      for (const path of ['/docs/json', '/api/v1/openapi.json', '/docs/static/index.html', '/admin/queues']) {
        const response = await fetch(stack.web.url + path, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
        await response.arrayBuffer();
      }
      const processes = [stack.web, ...stack.workers];
      for (const service of processes) expect(await service.stop('SIGTERM')).toBe(0);
      expect(processes.flatMap(nodeWarnings)).toStrictEqual([]);
    } finally {
      await stack.stop();
    }
  });
});
