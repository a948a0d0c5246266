import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countBy } from '../faults/support.js';
import { INTERNAL_TOKEN } from '../support/app.js';
import { freePort, startProcess, waitUntil } from '../support/processes.js';
import { stackModes, stackShapes, startStack } from '../support/stack.js';
import { busiestWindow, tokenBucket } from '../support/throttle.js';
import { startReceiver } from '../../kit/arrivalReceiver.js';
import { createTestCertificate } from '../support/tls.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type LoggedDelivery = { event_id: string; status: string; response_status: number | null; queued_at: string; attempted_at: string | null };

/** Fires `count` CRM syncs of new phones for the stack's account, some at once, as a first sync does. */
async function crmSync(stack: Stack, count: number, firstPhone: number) {
  const phones = Array.from({ length: count }, (_, i) => `+1${firstPhone + i}`);
  for (let i = 0; i < phones.length; i += 25) {
    const answers = await Promise.all(
      phones.slice(i, i + 25).map((phone) => stack.http.internal('POST', '/accounts/acme/contacts/sync', { phone, source: 'hubspot' })),
    );
    expect(answers.map((answer) => answer.body.action)).toStrictEqual(answers.map(() => 'inserted'));
  }
}

const deliveryLog = async (stack: Stack, hookId: string) => (await stack.api('GET', `/hooks/${hookId}/deliveries`)).body.deliveries as LoggedDelivery[];

/**
 * The shapes the pacing suite runs in. On a Redis Cluster, the burst and sliding-second tests:
 * the two that show two workers sharing one target's pace through the cluster exactly as through
 * one server.
 */
const pacingShapes = () => stackShapes().map((shape) => ({ ...shape, all: shape.redis !== 'cluster' }));

/**
 * Pacing, end to end, in both shapes: the embedded process, and web + two workers sharing the
 * pace through Redis. A receiver enforcing Zapier's 30/s per hook URL gets a CRM sync's burst
 * without one refusal; a 429's Retry-After holds the target; a subscription's own rate holds.
 */
describe.each(pacingShapes())('pacing deliveries, $label', ({ label, mode, redis, all }) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode, redis, workers: mode === 'workers' ? 2 : 0, env: { LOG_LEVEL: 'warn' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('delivers a 300-contact CRM sync to a hook limited to 30/s with no 429 and every event once', async () => {
    const bucket = tokenBucket(30);
    stack.answers['/zap'] = (request) => bucket.answer(request);
    await stack.subscribe('/zap');
    await crmSync(stack, 300, 4_155_560_000);
    await waitUntil(() => stack.received('/zap').length >= 300, 60_000);
    const counts = stack.countsPerDelivery('/zap');
    const arrivals = stack.received('/zap').map((request) => request.receivedAt);
    console.info(
      `[pacing ${label}] 300 events to one hook: ${bucket.refused} answered 429, busiest second ${busiestWindow(arrivals, 1000)} POSTs, ` +
        `${((Math.max(...arrivals) - Math.min(...arrivals)) / 1000).toFixed(1)} s first to last`,
    );
    expect(bucket.refused).toBe(0);
    expect(counts.size).toBe(300);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
  });

  // One server covers these; what differs on a cluster is only where the pace is kept.
  if (all) {
    it('holds a target for its Retry-After after a 429: the deliveries queued behind it wait, and none is lost', async () => {
      let first: number | undefined;
      stack.answers['/held'] = (request) => {
        if (first !== undefined) return { status: 200 };
        first = request.receivedAt;
        return { status: 429, headers: { 'retry-after': '3' } };
      };
      // One POST a second, so the second and third are queued, with slots inside the hold, when the 429 comes.
      const created = await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/held`, max_per_second: 1 });
      const hookId = created.body.id as string;
      await stack.newContacts(3);
      await waitUntil(() => stack.received('/held').length >= 3, 20_000);
      const [throttled, ...after] = stack.received('/held').map((request) => request.receivedAt);
      expect(throttled).toBe(first);
      for (const arrival of after) expect(arrival - first!).toBeGreaterThanOrEqual(3_000);

      await waitUntil(async () => (await deliveryLog(stack, hookId)).every((delivery) => delivery.attempted_at && delivery.status !== 'sending'));
      const log = await deliveryLog(stack, hookId);
      expect(countBy(log, (delivery) => `${delivery.status} ${delivery.response_status}`)).toStrictEqual(
        new Map([
          ['failed 429', 1],
          ['delivered 200', 2],
        ]),
      );
      for (const delivery of log) expect(Date.parse(delivery.attempted_at!)).toBeGreaterThanOrEqual(Date.parse(delivery.queued_at));
    });

    it("keeps a subscription's own max_per_second", async () => {
      const created = await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/slow`, max_per_second: 4 });
      expect(created.body.max_per_second).toBe(4);
      await stack.newContacts(9);
      await waitUntil(() => stack.received('/slow').length >= 9, 20_000);
      const arrivals = stack.received('/slow').map((request) => request.receivedAt);
      // Nine slots 250 ms apart span two seconds; a late first POST may shorten that by a little.
      expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeGreaterThanOrEqual(2_000 - 100);
      expect(busiestWindow(arrivals, 1000)).toBeLessThanOrEqual(5);
    });
  }
  it('never lets a receiver count more than the limit in any sliding second, at 1/s and 5/s, while the service is busy', async () => {
    // A receiver of its own process, as a remote one is: the test's own work does not skew its
    // clock. The busy traffic goes to another one, as it would to other hosts: what this one
    // counts is the service's pacing, not a backlog of its own.
    const counter = await startReceiver(createTestCertificate());
    const busy = await startReceiver(createTestCertificate());
    try {
      const paced = [
        { path: '/one-a-second', perSecond: 1 },
        { path: '/five-a-second', perSecond: 5 },
      ];
      for (const { path, perSecond } of paced) {
        expect((await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${counter.url}${path}`, max_per_second: perSecond })).status).toBe(201);
      }
      // Busy meanwhile: two unpaced hooks take every event at once, and a CRM sync keeps coming.
      for (const path of ['/busy-a', '/busy-b']) {
        expect((await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${busy.url}${path}`, max_per_second: 1000 })).status).toBe(201);
      }
      await crmSync(stack, 30, 4_155_570_000);
      await crmSync(stack, 100, 4_155_571_000);
      for (const { path, perSecond } of paced) {
        expect((await counter.waitForCount(8, 30_000, path)).count).toBeGreaterThanOrEqual(8);
        const arrivals = [...(await counter.times(`${path} `)).values()].sort((a, b) => a - b);
        console.info(
          `[pacing ${label}] ${path}: ${arrivals.length} POSTs, busiest second ${busiestWindow(arrivals, 1000)}, gaps ${arrivals
            .slice(1)
            .map((at, i) => Math.round(at - arrivals[i]!))
            .join(' ')}`,
        );
        expect(busiestWindow(arrivals, 1000)).toBeLessThanOrEqual(perSecond);
      }
      // The busy hooks were busy: each took every event.
      expect((await busy.waitForCount(260, 30_000)).count).toBe(260);
    } finally {
      await counter.close();
      await busy.close();
    }
  });
});

describe.each(stackModes())('bounded waiting, %s', (mode) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode, workers: mode === 'workers' ? 1 : 0, env: { LOG_LEVEL: 'warn', DELIVERY_MAX_WAIT: '4500ms' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('records a delivery that cannot get a slot within DELIVERY_MAX_WAIT as expired, and never sends it', async () => {
    const created = await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/backlog`, max_per_second: 1 });
    const hookId = created.body.id as string;
    // Slots a second apart: the later ones fall past 4.5 s from their events (the wait counts from
    // the event, so it includes the outbox; the margin is for a busy machine's).
    await stack.newContacts(10);
    await waitUntil(async () => (await deliveryLog(stack, hookId)).filter((d) => ['delivered', 'expired'].includes(d.status)).length === 10, 20_000);
    const log = await deliveryLog(stack, hookId);
    const expired = log.filter((delivery) => delivery.status === 'expired');
    expect(expired.length).toBeGreaterThanOrEqual(3);
    expect(log.length - expired.length).toBeGreaterThanOrEqual(2);
    expect(expired.every((delivery) => delivery.attempted_at === null)).toBe(true);
    const sent = new Set(stack.received('/backlog').map((request) => String(request.headers['webhook-id'])));
    expect(sent.size).toBe(log.length - expired.length);
    for (const delivery of expired) expect(sent.has(delivery.event_id)).toBe(false);
  });
});

describe.each(stackModes())('pacing made visible, %s', (mode) => {
  let stack: Stack;
  let metricsUrl: string;
  beforeAll(async () => {
    stack = await startStack({ mode, env: { LOG_LEVEL: 'warn' } });
    metricsUrl = `${stack.web.url}/metrics`;
    if (mode === 'workers') {
      const port = await freePort();
      stack.workers.push(startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' }));
      metricsUrl = `http://127.0.0.1:${port}/metrics`;
      await waitUntil(async () => (await fetch(metricsUrl).catch(() => undefined))?.ok === true, 15_000);
    }
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const metric = async (name: string) => {
    const text = await (await fetch(metricsUrl, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    const line = text.split('\n').find((row) => row.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('shows deliveries parked for their time, their wait and throttled answers in /metrics, and the waiting jobs in Bull Board', async () => {
    let answered = 0;
    stack.answers['/visible'] = () => (answered++ === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/visible`, max_per_second: 1 });
    await stack.newContacts(6);
    await waitUntil(async () => ((await metric('contact_hooks_queue_jobs{queue="deliveries",state="delayed"}')) ?? 0) >= 1, 10_000);
    if (mode === 'workers') {
      const board = await fetch(`${stack.web.url}/admin/queues/api/queues?activeQueue=deliveries&status=delayed&page=1`, {
        headers: { authorization: `Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}` },
      });
      const queues = ((await board.json()) as { queues: Array<{ name: string; counts: { delayed: number } }> }).queues;
      expect(queues.find((queue) => queue.name === 'deliveries')?.counts.delayed).toBeGreaterThanOrEqual(1);
    }
    await waitUntil(() => stack.received('/visible').length >= 6, 20_000);
    await waitUntil(async () => (await metric('webhook_delivery_wait_seconds_count')) === 6, 5_000);
    expect(await metric('webhook_throttled_total')).toBe(1);
    expect(await metric('contact_hooks_queue_jobs{queue="deliveries",state="delayed"}')).toBe(0);
  });
});
