import { Queue } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bullPrefix } from '../../src/queue/redisConnection.js';
import { startStack } from '../support/stack.js';
import { sleep, waitUntil } from '../support/processes.js';
import { describeEachRedisShape } from '../support/redisShapes.js';

/**
 * At most once under the faults that make a naive queue send twice: the same event's job added
 * again, a worker SIGKILLed mid-delivery, and a frozen worker whose job another worker takes.
 * Each prints what was delivered, lost and duplicated. On a Redis Cluster, the SIGKILLs.
 */
/**
 * Between a claim and its POST reaching the target: the claim's lead (a claim is taken that far
 * ahead of its departure: as long as claims take lately, tens of ms, more on a loaded host), its
 * commit's way back, and the request's way out; the worker is killed once its connections are
 * open, so no handshake adds to it: tens of ms on a busy host. A delivery that held its claim
 * while the gate's departure came (up to SOON_MS, 250 ms, and its lead) would leave older claims
 * unsent, and one that held it while waiting for its place, seconds: this window tells them apart.
 */
const SENDING_WINDOW_MS = 100;

describeEachRedisShape('worker faults never produce a second POST, Redis %s', (shape) => {
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', redis: shape, workers: 2 });
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

  if (shape === 'single') {
    // One server covers a job added again; on a cluster only where the jobs live differs.
    it('sends once when the same event’s job is added again, while and after it runs, and when a copy of its delivery’s job comes', async () => {
      const hook = await stack.subscribe('/twice');
      stack.delayMs['/twice'] = 500;
      const [contactId] = await stack.newContacts(1);
      await waitUntil(() => stack.received('/twice').length === 1, 10_000);
      const [delivery] = await stack.sql(
        `SELECT d.id::text, d.event_id::text, d.account_id, e.event_type, to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS fired_at
         FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.data->>'contact_id' = $1`,
        [contactId],
      );
      const connection = stack.redis!.client();
      const events = new Queue('events', { connection, prefix: bullPrefix(stack.redis!.prefix) });
      const deliveries = new Queue('deliveries', { connection, prefix: bullPrefix(stack.redis!.prefix) });
      const event = { event_id: delivery.event_id, event: delivery.event_type, account_id: delivery.account_id, fired_at: delivery.fired_at };
      try {
        // The event's job added again while its POST is on the wire: the id is held, nothing is added.
        await events.add(event.event, event, { jobId: event.event_id });
        await waitUntil(async () => (await events.getJobState(event.event_id)) === 'completed', 10_000);
        // Its kept job removed and the job added again, as the relay would after a lost fan-out's
        // answer: it runs again, fans out nothing new, and reports the delivery as it stands.
        await (await events.getJob(event.event_id))!.remove();
        await events.add(event.event, event, { jobId: event.event_id });
        await waitUntil(async () => (await events.getJobState(event.event_id)) === 'completed', 10_000);
        expect((await events.getJob(event.event_id))!.returnvalue.deliveries).toMatchObject([{ delivery_id: delivery.id, status: 'delivered' }]);
        // A relayed copy of its delivery's job: it finds the delivery sent.
        const data = { delivery_id: delivery.id, event_id: delivery.event_id, hook_id: hook, account_id: delivery.account_id, due_at: Date.now() };
        await deliveries.add('relayed', data, { jobId: `${delivery.id}.copy` });
        await waitUntil(async () => (await deliveries.getJobState(`${delivery.id}.copy`)) === 'completed', 10_000);
        expect((await deliveries.getJob(`${delivery.id}.copy`))!.returnvalue).toMatchObject({ delivery_id: delivery.id, status: 'delivered' });
        await sleep(1000);
        expect(report('job added again', '/twice', 1)).toStrictEqual({ delivered: 1, duplicated: 0 });
      } finally {
        await events.close();
        await deliveries.close();
        connection.disconnect();
      }
      await stack.api('DELETE', `/hooks/${hook}`);
    });
  }

  it('never sends twice when a worker is SIGKILLed mid-delivery and its jobs stall', async () => {
    const hook = await stack.subscribe('/killed');
    stack.delayMs['/killed'] = 1500;
    await stack.newContacts(20);
    await waitUntil(() => stack.received('/killed').length >= 3, 10_000);
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGKILL');
    stack.startWorker();
    // The killed workers' jobs stall and run again on the new worker; what they held unsent is
    // also overdue after the relay's grace, and its relay adds it again.
    await sleep(8000);
    const { duplicated, delivered } = report('SIGKILL', '/killed', 20);
    expect(duplicated).toBe(0);
    const claimed = await stack.sql(`SELECT count(*)::int AS n FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/killed'`);
    expect(claimed[0].n).toBeGreaterThanOrEqual(delivered);
    stack.startWorker();
    await stack.api('DELETE', `/hooks/${hook}`);
  });

  if (shape === 'single') {
    // One server covers the frozen worker; on a cluster only where its lock lives differs.
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
  }

  it('lets a SIGKILL cost only the POSTs on the wire: deliveries waiting at a paced gate go back to the line and are delivered', async () => {
    const paths = ['/paced-a', '/paced-b'];
    for (const path of paths) {
      await stack.subscribe(path); // the default pace, 20/s: a backlog waits at the gate
      stack.delayMs[path] = 300; // and each POST stays on the wire a while
    }
    const contacts = 75;
    await stack.newContacts(contacts);
    // Killed once each worker's connections to the targets are open (the first second's POSTs
    // opened them), with most of the backlog still waiting at the gate.
    await waitUntil(() => paths.every((path) => stack.received(path).length >= 30), 15_000);
    const [victim] = stack.workers.splice(0, 1);
    const killedAt = Date.now();
    await victim!.stop('SIGKILL');

    const statusOf = async () =>
      stack.sql(
        `SELECT d.status, d.event_id::text, h.target_url, (extract(epoch FROM d.attempted_at) * 1000)::float8 AS claimed_at
         FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/paced-_'`,
      );
    // The other worker delivers everything that was only waiting; only what was on the wire may stay `sending`.
    await waitUntil(async () => (await statusOf()).every((row) => row.status !== 'queued'), 30_000);
    await sleep(1000);
    const rows = await statusOf();
    expect(rows).toHaveLength(2 * contacts);
    const left = rows.filter((row) => row.status === 'sending');
    // On the wire: the target got the POST, or its claim was the last thing done before the
    // kill (the claim commits, then the POST is written at once). A delivery that waited at the
    // gate holding a claim would show as claimed earlier and never received.
    const received = new Set(paths.flatMap((path) => stack.received(path).map((request) => `${path} ${String(request.headers['webhook-id'])}`)));
    const wasSending = (row: { target_url: string; event_id: string; claimed_at: number }) =>
      received.has(`${new URL(row.target_url).pathname} ${row.event_id}`) || row.claimed_at > killedAt - SENDING_WINDOW_MS;
    const unreceived = left.filter((row) => !received.has(`${new URL(row.target_url).pathname} ${row.event_id}`));
    console.info(
      `[worker kill] ${left.length} deliveries left sending (on the wire when the worker died), ${rows.length - left.length} delivered; ` +
        `claimed and never received, ms before the kill: ${unreceived.map((row) => Math.round(killedAt - row.claimed_at)).join(' ') || 'none'}`,
    );
    expect(left.filter((row) => !wasSending(row))).toStrictEqual([]);
    expect(rows.filter((row) => row.status !== 'sending' && row.status !== 'delivered')).toStrictEqual([]);
    for (const path of paths) expect([...stack.countsPerDelivery(path).values()].filter((count) => count > 1)).toStrictEqual([]);
    stack.startWorker();
  });
});
