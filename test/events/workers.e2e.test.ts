import { afterAll, beforeAll, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { startStack } from '../support/stack.js';
import { freePort, sleep, startProcess, waitUntil } from '../support/processes.js';
import { describeEachRedisShape } from '../support/redisShapes.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** A job as Bull Board's own API shows it (GET /admin/queues/api/queues/<queue>/<job id>). */
interface BoardJob {
  id: string;
  name: string;
  attempts: number;
  opts: { attempts?: number };
  data: Record<string, unknown>;
  returnValue: { deliveries?: Array<Record<string, unknown>> } & Record<string, unknown>;
  progress: unknown;
  failedReason?: string;
}

/** Reads Bull Board's API with the internal token, as an operator's browser does. */
const board = async (stack: Stack, path: string) => {
  const response = await fetch(`${stack.web.url}/admin/queues/api/queues${path}`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/**
 * The job of `queue` with `id`, once it is in `state` (and, completed, has its return value: the
 * board reads the job and its state one after the other, so a job completing between them reads
 * completed without one).
 */
async function boardJob(stack: Stack, queue: string, id: string, state = 'completed'): Promise<BoardJob> {
  let found: { job: BoardJob; status: string } | undefined;
  await waitUntil(async () => {
    const { status, body } = await board(stack, `/${queue}/${id}`);
    found = status === 200 ? (body as unknown as { job: BoardJob; status: string }) : undefined;
    return found?.status === state && (state !== 'completed' || found.job.returnValue !== null);
  }, 15_000);
  return found!.job;
}

/** The event ids (the webhook-id of their POSTs) of the new_contact events of `contactIds`, in order. */
const eventIdsOf = async (stack: Stack, contactIds: string[]) => {
  const rows = await stack.sql(`SELECT id::text, data->>'contact_id' AS contact_id FROM events WHERE data->>'contact_id' = ANY($1)`, [contactIds]);
  return contactIds.map((contactId) => rows.find((row) => row.contact_id === contactId)!.id as string);
};

/**
 * The production shape: a web process that records and enqueues, separate worker processes that
 * take each event's job from BullMQ, fan it out and deliver it; on one Redis server and on a Redis
 * Cluster. Operators follow each event in Bull Board. Crash and stall faults are in
 * test/faults/workerFaults.test.ts.
 */
describeEachRedisShape('delivery through BullMQ jobs with separate workers, Redis %s', (shape) => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', redis: shape, workers: 2 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('delivers every event once to every subscription, across two workers', async () => {
    const hooks = [await stack.subscribe('/a'), await stack.subscribe('/b')];
    await stack.newContacts(40);
    await waitUntil(() => stack.received('/a').length === 40 && stack.received('/b').length === 40, 20_000);
    await sleep(500);
    for (const path of ['/a', '/b']) {
      const counts = stack.countsPerDelivery(path);
      expect(counts.size).toBe(40);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
    }
    const delivered = await stack.sql("SELECT count(*)::int AS n FROM deliveries WHERE status = 'delivered'");
    expect(delivered[0].n).toBe(80);
    for (const id of hooks) await stack.api('DELETE', `/hooks/${id}`);
  });

  it('makes each fired event one completed job of the events queue, whose return value lists each delivery', async () => {
    const hooks = [await stack.subscribe('/job-a'), await stack.subscribe('/job-b')];
    const [contactId] = await stack.newContacts(1);
    const [eventId] = await eventIdsOf(stack, [contactId!]);
    const job = await boardJob(stack, 'events', eventId!);
    expect(job.id).toBe(eventId);
    expect(job.name).toBe('new_contact');
    expect(job.attempts).toBe(1);
    expect(job.opts.attempts).toBe(1);
    expect(job.data).toStrictEqual({
      event_id: eventId,
      event: 'new_contact',
      account_id: 'acme',
      fired_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    });
    expect(job.progress).toStrictEqual({ deliveries: 2, settled: 2 });
    const reports = job.returnValue.deliveries!;
    expect(new Set(reports.map((report) => report.hook_id))).toStrictEqual(new Set(hooks));
    for (const report of reports) {
      expect(report).toStrictEqual({
        hook_id: expect.any(String),
        delivery_id: expect.any(String),
        status: 'delivered',
        response_status: 200,
        duration_ms: expect.any(Number),
      });
    }
    // The POSTs it lists are the ones the receiver got, with the job's id as their webhook-id.
    expect(stack.received('/job-a').map((request) => request.headers['webhook-id'])).toStrictEqual([eventId]);
    for (const id of hooks) await stack.api('DELETE', `/hooks/${id}`);
  });

  it('records an event nobody subscribed to for the feed only, with no events job and no outbox row; a subscribed one is a job', async () => {
    // The tests before deleted their subscriptions: the account has none of new_contact.
    const [unwanted] = await eventIdsOf(stack, await stack.newContacts(1));
    expect((await stack.sql('SELECT count(*)::int AS n FROM event_outbox WHERE event_id = $1', [unwanted]))[0].n).toBe(0);
    const feed = await stack.api('GET', '/events?event=new_contact');
    expect(feed.status).toBe(200);
    expect((feed.body.events as { id: string }[]).map((event) => event.id)).toContain(unwanted);

    const hook = await stack.subscribe('/wanted');
    const [wanted] = await eventIdsOf(stack, await stack.newContacts(1));
    expect((await boardJob(stack, 'events', wanted!)).returnValue.deliveries).toHaveLength(1);
    // Bull Board never had a job for the unwanted one, though the wanted one, after it, ran.
    expect((await board(stack, `/events/${unwanted}`)).status).toBe(404);
    await stack.api('DELETE', `/hooks/${hook}`);
  });

  it('shows a failing receiver as a failed delivery with its HTTP status in a completed job, and sends it no second POST', async () => {
    const hook = await stack.subscribe('/broken');
    stack.answers['/broken'] = () => ({ status: 500 });
    const [contactId] = await stack.newContacts(1);
    const [eventId] = await eventIdsOf(stack, [contactId!]);
    const job = await boardJob(stack, 'events', eventId!);
    expect(job.returnValue.deliveries).toStrictEqual([
      { hook_id: hook, delivery_id: expect.any(String), status: 'failed', response_status: 500, duration_ms: expect.any(Number) },
    ]);
    expect(job.failedReason).toBeUndefined();
    await sleep(2_000);
    expect(stack.received('/broken')).toHaveLength(1);
    await stack.api('DELETE', `/hooks/${hook}`);
  });

  it('parks deliveries that wait for their pace as delayed jobs of the deliveries queue, and delivers them at their time', async () => {
    const created = await stack.api('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/paced`, max_per_second: 1 });
    const contactIds = await stack.newContacts(4);
    const eventIds = await eventIdsOf(stack, contactIds);
    const jobs = await Promise.all(eventIds.map((id) => boardJob(stack, 'events', id)));
    const parked = jobs.flatMap((job) => job.returnValue.deliveries!).filter((report) => report.status === 'queued');
    // 1 a second: the first goes at once, the next within NEAR_WAIT_MS, the rest are parked.
    expect(parked.length).toBeGreaterThanOrEqual(1);
    for (const report of parked) expect(report.due_at).toEqual(expect.any(String));
    await waitUntil(() => stack.received('/paced').length === 4, 15_000);
    // The parked delivery's job, as an operator follows it: on a loaded machine its claim can come
    // too late for its departure, and the job parks it again, naming its next job by its due time.
    let report = parked[0]!;
    let parkedJob = await boardJob(stack, 'deliveries', `${String(report.delivery_id)}.${Date.parse(String(report.due_at))}`);
    expect(parkedJob.name).toBe('paced');
    expect(Object.keys(parkedJob.data).sort()).toStrictEqual(['account_id', 'delivery_id', 'due_at', 'event_id', 'hook_id']);
    for (let hop = 0; parkedJob.returnValue.status === 'queued' && hop < 4; hop++) {
      report = parkedJob.returnValue;
      parkedJob = await boardJob(stack, 'deliveries', `${String(report.delivery_id)}.${Date.parse(String(report.due_at))}`);
    }
    expect(parkedJob.returnValue).toMatchObject({ delivery_id: parked[0]!.delivery_id, status: 'delivered', response_status: 200 });
    await stack.api('DELETE', `/hooks/${created.body.id}`);
  });

  it('keeps events waiting in the queue and the outbox while no worker runs; a worker started later delivers each once', async () => {
    const id = await stack.subscribe('/later');
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGTERM');
    const contactIds = await stack.newContacts(3);
    const eventIds = await eventIdsOf(stack, contactIds);
    expect((await stack.sql('SELECT count(*)::int AS n FROM event_outbox WHERE event_id = ANY($1)', [eventIds]))[0].n).toBe(3);
    // Waiting at their account's turn: BullMQ's state for a job with a priority.
    for (const eventId of eventIds) expect((await board(stack, `/events/${eventId}`)).body.status).toBe('prioritized');
    stack.startWorker();
    await waitUntil(() => stack.received('/later').length === 3, 10_000);
    expect((await stack.sql('SELECT count(*)::int AS n FROM event_outbox WHERE event_id = ANY($1)', [eventIds]))[0].n).toBe(0);
    await sleep(500);
    expect([...stack.countsPerDelivery('/later').values()]).toStrictEqual([1, 1, 1]);
    await stack.api('DELETE', `/hooks/${id}`);
  });

  it('sends nothing to a subscription deleted while its events wait for a worker', async () => {
    const id = await stack.subscribe('/unsubscribed');
    for (const worker of stack.workers.splice(0)) await worker.stop('SIGTERM');
    const contactIds = await stack.newContacts(3);
    expect((await stack.api('DELETE', `/hooks/${id}`)).body).toStrictEqual({ ok: true });
    stack.startWorker();
    const eventIds = await eventIdsOf(stack, contactIds);
    for (const eventId of eventIds) expect((await boardJob(stack, 'events', eventId)).returnValue.deliveries).toStrictEqual([]);
    expect((await stack.sql('SELECT count(*)::int AS n FROM deliveries WHERE hook_id = $1', [id]))[0].n).toBe(0);
    expect(stack.received('/unsubscribed')).toHaveLength(0);
  });

  it('finishes in-flight deliveries on SIGTERM and exits 0', async () => {
    await stack.subscribe('/graceful');
    stack.delayMs['/graceful'] = 1000;
    await stack.newContacts(3);
    await waitUntil(() => stack.received('/graceful').length >= 1, 10_000);
    const stopping = stack.workers.splice(0);
    const codes = await Promise.all(stopping.map((worker) => worker.stop('SIGTERM')));
    expect(codes).toStrictEqual(stopping.map(() => 0));
    const outcomes = await stack.sql(`SELECT d.status FROM deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.target_url LIKE '%/graceful'`);
    // Every delivery a stopping worker had claimed was finished; the rest wait, queued, for the next worker.
    const claimed = outcomes.filter((row) => row.status !== 'queued');
    expect(claimed.length).toBeGreaterThanOrEqual(1);
    expect(claimed.every((row) => row.status === 'delivered')).toBe(true);
    stack.startWorker();
    await waitUntil(() => stack.received('/graceful').length === 3, 15_000);
  });

  it('serves a worker’s delivery metrics on WORKER_METRICS_PORT', async () => {
    const port = await freePort();
    const worker = startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' });
    for (const other of stack.workers.splice(0)) await other.stop('SIGTERM');
    stack.workers.push(worker);
    await stack.subscribe('/metered');
    await stack.newContacts(2);
    await waitUntil(() => stack.received('/metered').length === 2, 10_000);
    // The receiver has the POSTs a moment before the worker has their answers and counts them.
    const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text());
    await waitUntil(async () => /webhook_deliveries_total\{outcome="delivered"\} 2/.test(await metrics()), 5_000);
    expect(await metrics()).toMatch(/webhook_delivery_duration_seconds_count 2/);
  });

  it('drains in-flight requests on SIGTERM of the web process and exits 0', async () => {
    const answers = Array.from({ length: 20 }, (_, i) =>
      stack.api('POST', '/contacts', { phone: `+1415555${7000 + i}` }).then(
        (response) => response.status,
        () => 'not accepted' as const,
      ),
    );
    await sleep(5);
    const code = await stack.web.stop('SIGTERM');
    expect(code).toBe(0);
    // Every request the server accepted was answered in full; the closing server refuses the rest.
    const statuses = await Promise.all(answers);
    expect(statuses.every((status) => status === 200 || status === 503 || status === 'not accepted')).toBe(true);
    expect(statuses).toContain(200);
  });
});

describeEachRedisShape('operator surfaces with Redis %s', (shape) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', redis: shape });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('serves Bull Board at /admin/queues to the internal token only, read-only, with both queues', async () => {
    const page = (authorization?: string) => fetch(`${stack.web.url}/admin/queues`, { headers: authorization ? { authorization } : {} });
    const anonymous = await page();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await page('Bearer wrong-token-wrong-token')).status).toBe(401);
    const ok = await page(`Bearer ${INTERNAL_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<html');
    expect((await page(`Basic ${Buffer.from(`ops:${INTERNAL_TOKEN}`).toString('base64')}`)).status).toBe(200);
    // Its API reads the queues themselves (BullMQ's scripts, on the cluster too).
    const { status, body } = await board(stack, '?activeQueue=events&status=latest&page=1');
    expect(status).toBe(200);
    const queues = (body.queues as Array<{ name: string; readOnlyMode: boolean; description: string }>).map(({ name, readOnlyMode, description }) => ({
      name,
      readOnlyMode,
      described: description.length > 0,
    }));
    expect(queues.sort((a, b) => a.name.localeCompare(b.name))).toStrictEqual([
      { name: 'deliveries', readOnlyMode: true, described: true },
      { name: 'events', readOnlyMode: true, described: true },
    ]);
    const write = await fetch(`${stack.web.url}/admin/queues/api/queues/events/clean/completed`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
    });
    expect(write.status).toBe(405);
  });

  it('reports readiness, the outbox and each queue’s jobs by state in /metrics', async () => {
    expect(await (await fetch(`${stack.web.url}/readyz`)).json()).toStrictEqual({ ok: true, storage: 'ok', queue: 'ok' });
    await stack.subscribe('/depth');
    await stack.newContacts(2); // no workers: their events wait, in the outbox and as waiting jobs
    const metrics = await (await fetch(`${stack.web.url}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).toMatch(/^contact_hooks_queue_jobs\{queue="events",state="waiting"\} 2$/m);
    expect(metrics).toMatch(/^contact_hooks_queue_jobs\{queue="deliveries",state="delayed"\} 0$/m);
    expect(metrics).toMatch(/^event_queue_depth 2$/m);
  });

  it('counts the worker processes consuming the events queue, on whichever node each connected', async () => {
    const consuming = async () => {
      const text = await (await fetch(`${stack.web.url}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
      return Number(/^contact_hooks_workers_consuming (\S+)$/m.exec(text)?.[1]);
    };
    await waitUntil(async () => (await consuming()) === 0, 10_000);
    for (let i = 0; i < 3; i++) stack.startWorker();
    await waitUntil(async () => (await consuming()) === 3, 20_000);
  });
});
