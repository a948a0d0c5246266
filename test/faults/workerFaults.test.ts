import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../support/stack.js';
import { sleep, waitUntil, withPostgresAndRedis } from '../support/processes.js';

/**
 * At most once under the faults that make a naive queue send twice: the same event enqueued
 * again, a worker SIGKILLed mid-delivery, and a frozen worker whose job another worker takes.
 * Each prints what was delivered, lost and duplicated.
 */
describe.runIf(withPostgresAndRedis)('worker faults never produce a second POST', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'bullmq', workers: 2 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const report = (label: string, path: string, fired: number) => {
    const counts = stack.countsPerDelivery(path);
    const duplicated = [...counts.values()].filter((count) => count > 1).length;
    console.info(`${label}: fired ${fired}, delivered ${counts.size}, lost ${fired - counts.size}, duplicated ${duplicated}`);
    return { delivered: counts.size, duplicated };
  };

  it('sends once when the same event is enqueued again under another job id, while and after it runs', async () => {
    const hook = await stack.subscribe('/twice');
    stack.delayMs['/twice'] = 500;
    const [contactId] = await stack.newContacts(1);
    const [event] = await stack.sql("SELECT id FROM events WHERE data->>'contact_id' = $1", [contactId]);
    const connection = new Redis(stack.redis!.url);
    const queue = new Queue('events', { connection, prefix: stack.redis!.prefix });
    try {
      await queue.add('deliver-event', { eventId: event.id }, { jobId: `${event.id}-again-1` });
      await waitUntil(() => stack.received('/twice').length === 1, 10_000);
      await queue.add('deliver-event', { eventId: event.id }, { jobId: `${event.id}-again-2` });
      await sleep(1500);
      expect(report('enqueued twice', '/twice', 1)).toStrictEqual({ delivered: 1, duplicated: 0 });
    } finally {
      await queue.close();
      await connection.quit();
    }
    await stack.api('DELETE', `/hooks/${hook}`);
  });

  it('never sends twice when a worker is SIGKILLed mid-delivery and its jobs stall', async () => {
    const hook = await stack.subscribe('/killed');
    stack.delayMs['/killed'] = 1500;
    await stack.newContacts(20);
    await waitUntil(() => stack.received('/killed').length >= 3, 10_000);
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGKILL');
    stack.startWorker();
    // The killed workers' locks expire (WORKER_LOCK_MS) and the new worker runs the stalled jobs again.
    await sleep(7000);
    const { duplicated, delivered } = report('SIGKILL', '/killed', 20);
    expect(duplicated).toBe(0);
    const claimed = await stack.sql(
      `SELECT count(*)::int AS n FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/killed'`,
    );
    expect(claimed[0].n).toBeGreaterThanOrEqual(delivered);
    stack.startWorker();
    await stack.api('DELETE', `/hooks/${hook}`);
  });

  it('never sends twice when a frozen worker loses its lock and another worker takes the stalled job', async () => {
    const hook = await stack.subscribe('/frozen');
    stack.delayMs['/frozen'] = 800;
    const [victim] = stack.workers;
    await stack.newContacts(10);
    await waitUntil(() => stack.received('/frozen').length >= 1, 10_000);
    victim!.child.kill('SIGSTOP'); // like an event loop blocked past the lock
    await sleep(6000);
    victim!.child.kill('SIGCONT');
    await sleep(3000);
    expect(report('stalled', '/frozen', 10).duplicated).toBe(0);
    await stack.api('DELETE', `/hooks/${hook}`);
  });
});
