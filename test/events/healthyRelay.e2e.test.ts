import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { freePort, sleep, startProcess, waitUntil, withPostgresAndRedis } from '../support/processes.js';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * A CRM sync's new contacts per burst: at the default pace (20/s) its last POSTs leave some 20 s
 * after its first, long enough for a delivery to wait past its lease (RELAY_GRACE_MS) behind them.
 */
const BURST = 400;

/** The bad receivers a burst's second hook goes to; its first goes to a receiver that answers 200 at once. */
const BAD_RECEIVERS = [
  { receiver: 'refusing connections (nothing listens)', path: '/down', outcome: 'failed' },
  { receiver: 'answering 500', path: '/fails', outcome: 'failed' },
  // Slower than its in-flight room allows at its pace (32 POSTs, 60 wanted): deliveries wait for room.
  { receiver: 'answering after 3 s', path: '/slow', outcome: 'delivered' },
] as const;

const operator = { authorization: `Bearer ${INTERNAL_TOKEN}` };

/** A queue's jobs as Bull Board's own API lists them, in every state it keeps, and its counts. */
async function boardJobs(stack: Stack, queue: 'events' | 'deliveries') {
  const jobs: Array<{ name: string; data: { hook_id?: string } }> = [];
  let counts: Record<string, number> = {};
  for (const status of ['waiting', 'active', 'delayed', 'completed', 'failed']) {
    const response = await fetch(`${stack.web.url}/admin/queues/api/queues?activeQueue=${queue}&status=${status}&jobsPerPage=100000`, { headers: operator });
    const listed = ((await response.json()) as { queues: Array<{ name: string; counts: Record<string, number>; jobs: typeof jobs }> }).queues;
    const shown = listed.find((entry) => entry.name === queue)!;
    counts = shown.counts;
    jobs.push(...shown.jobs);
  }
  return { jobs, counts };
}

/**
 * The relay is for work whose process died or whose job Redis lost. In a healthy run (nothing
 * killed, Redis up) it adds nothing, however long a paced burst's deliveries wait while their
 * worker holds them: a burst to a good hook and a bad one (refusing, failing, slow) settles
 * through the deliveries' own jobs, with no `relayed` job, no events job added again, and the
 * worker's relay counter at 0.
 */
describe.runIf(withPostgresAndRedis)('a healthy run relays nothing', () => {
  let stack: Stack;
  let metricsUrl: string;
  let downPort: number;
  let phone = 4_155_700_000;
  let fired = 0;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', env: { LOG_LEVEL: 'warn' } });
    const port = await freePort();
    stack.workers.push(startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' }));
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    await waitUntil(async () => (await fetch(metricsUrl).catch(() => undefined))?.ok === true, 15_000);
    stack.answers['/fails'] = () => ({ status: 500 });
    stack.delayMs['/slow'] = 3_000;
    downPort = await freePort();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  // A burst's hooks go with it, passed or failed: the next burst is for its own two alone.
  const hooks: string[] = [];
  afterEach(async () => {
    for (const hook of hooks.splice(0)) expect((await stack.api('DELETE', `/hooks/${hook}`)).status).toBe(200);
  });

  const relayedCounts = async () => {
    const text = await (await fetch(metricsUrl)).text();
    const counted = (queue: string) => Number(text.match(new RegExp(`^contact_hooks_relayed_total\\{queue="${queue}"\\} (\\S+)$`, 'm'))?.[1]);
    return { events: counted('events'), deliveries: counted('deliveries') };
  };

  it.each(BAD_RECEIVERS)('settles a burst to a good hook and one $receiver', { timeout: 120_000 }, async ({ path, outcome }) => {
    const live = await stack.subscribe(`/live${path}`);
    hooks.push(live);
    const badUrl = path === '/down' ? `https://127.0.0.1:${downPort}/down` : `${stack.receiver.url}${path}`;
    const created = await stack.api('POST', '/hooks', { event: 'new_contact', target_url: badUrl });
    expect(created.status).toBe(201);
    const bad = created.body.id as string;
    hooks.push(bad);

    const relayedBefore = await relayedCounts();
    expect(Object.values(relayedBefore).every(Number.isFinite)).toBe(true); // the worker exposes the counter
    const phones = Array.from({ length: BURST }, () => `+1${phone++}`);
    const synced = await Promise.all(phones.map((number) => stack.http.internal('POST', '/accounts/acme/contacts/sync', { phone: number, source: 'hubspot' })));
    expect(synced.map((answer) => answer.body.action)).toStrictEqual(phones.map(() => 'inserted'));
    fired += BURST;

    const statuses = async () =>
      Object.fromEntries(
        (await stack.sql(`SELECT hook_id::text, status, count(*)::int AS n FROM deliveries WHERE hook_id = ANY($1::uuid[]) GROUP BY 1, 2`, [[live, bad]])).map(
          (row) => [`${row.hook_id === live ? 'live' : 'bad'} ${row.status}`, row.n],
        ),
      );
    let seen: Record<string, number> = {};
    await waitUntil(
      async () => {
        await sleep(500); // a connection per look: the machine's cores are for the service
        seen = await statuses();
        return seen['live delivered'] === BURST && seen[`bad ${outcome}`] === BURST;
      },
      100_000,
      () => `deliveries by status: ${JSON.stringify(seen)}`,
    );

    expect(await statuses()).toStrictEqual({ 'live delivered': BURST, [`bad ${outcome}`]: BURST });
    // Each event once at each receiver that answers (at most once, and none lost).
    for (const received of path === '/down' ? [`/live${path}`] : [`/live${path}`, path]) {
      const counts = stack.countsPerDelivery(received);
      expect(counts.size).toBe(BURST);
      expect([...counts.values()].filter((count) => count > 1)).toStrictEqual([]);
    }
    const { jobs } = await boardJobs(stack, 'deliveries');
    const ours = jobs.filter((job) => job.data.hook_id === live || job.data.hook_id === bad);
    expect(ours.length).toBeGreaterThan(0); // parked for their pace
    expect(ours.filter((job) => job.name === 'relayed').length).toBe(0);
    const events = await boardJobs(stack, 'events');
    expect(events.counts).toMatchObject({ completed: fired, failed: 0 });
    expect(await relayedCounts()).toStrictEqual(relayedBefore);
  });
});
