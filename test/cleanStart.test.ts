import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from './support/app.js';
import { startBullStack } from './support/bullStack.js';
import { startWeb, stopAllProcesses, waitUntil, withPostgresAndRedis, type ServiceProcess } from './support/processes.js';

/** What Node prints for a process warning, deprecations included: `(node:PID) [CODE] XWarning: …`. */
const nodeWarnings = (service: ServiceProcess) => service.output().split('\n').filter((line) => /^\(node:\d+\) /.test(line));

/**
 * Each process starts, serves and stops without a warning, on whichever Node runs the suite
 * (the processes are spawned with the suite's own `process.execPath`).
 */
describe('a clean start', () => {
  afterAll(async () => {
    await stopAllProcesses();
  });

  it('prints no warning from the embedded web process, with the first-party API and docs mounted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-clean-'));
    try {
      const web = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN });
      for (const path of ['/docs/json', '/api/v1/openapi.json', '/docs/static/index.html']) await fetch(web.url + path).then((r) => r.arrayBuffer());
      expect(await web.stop('SIGTERM')).toBe(0);
      expect(nodeWarnings(web)).toStrictEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it.runIf(withPostgresAndRedis)('prints no warning from a web process on Redis (Bull Board mounted) or from a worker that delivers', async () => {
    const stack = await startBullStack({ workers: 1 });
    try {
      await stack.subscribe('/clean');
      await stack.newContacts(1);
      await waitUntil(() => stack.received('/clean').length === 1, 15_000);
      const board = await fetch(`${stack.web.url}/admin/queues`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
      expect(board.status).toBe(200);
      await board.arrayBuffer();
      const processes = [stack.web, ...stack.workers];
      for (const service of processes) expect(await service.stop('SIGTERM')).toBe(0);
      expect(processes.flatMap(nodeWarnings)).toStrictEqual([]);
    } finally {
      await stack.stop();
    }
  });
});
