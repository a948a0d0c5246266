import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATE_DEPARTURE_MS, NEW_CONNECTION_ALLOWANCE_MS } from '../../src/domain/pacing.js';
import { MAX_PER_SECOND_RANGE } from '../../src/domain/hooks.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createTurnCounter } from '../../src/domain/turns.js';
import { createDeliverer } from '../../src/workers/deliver.js';
import { createLocalPacer, type GateRequest, type Pacer } from '../../src/workers/pacer.js';
import { createRedisPacer } from '../../src/workers/redisPacer.js';
import { waitUntil } from '../../kit/waiting.js';
import { createPoster, type Poster } from '../../src/workers/poster.js';
import type { Delivery, DeliveryJobData } from '../../src/domain/delivery.js';
import { collectingQueue, issueKey } from '../support/app.js';
import { useTestStore, withPostgres, newContactDeliveries } from '../support/databases.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { redisForTest, withPostgresAndRedis } from '../support/processes.js';
import { newAccount } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startSlowHandshakes } from '../support/slowHandshakes.js';
import { busiestWindow } from '../support/throttle.js';
import { createTestCertificate } from '../support/tls.js';

const log = pino({ level: 'silent' });
/**
 * How long another transaction holds the delivery's row: longer than any claim lead (at most 1 s,
 * learnt from how long claims took), so its claim commits late for the departure whatever the lead.
 */
const ROW_HELD_MS = 1_500;
let phone = 1000;

/**
 * A claim that commits too late for the departure the gate granted (a slow database, a busy
 * process) asks the gate for a second departure at once, holding its claim: one within
 * LATE_DEPARTURE_MS is taken and the claim is never given back; none that soon, and the claim
 * is given back and the delivery passes the gate again; so it is too when the pacer does not
 * answer within LATE_DEPARTURE_MS (no claim is held while Redis is away). Sent once either way.
 * At a target paced faster than any receiver counts, a late claim is simply sent.
 * On PostgreSQL: a row lock held by another transaction is what makes the claim late.
 * And a POST whose first byte leaves late (a long handshake) spaces its target's next departures
 * further, so a receiver's sliding second still holds no more than the rate.
 */
describe.runIf(withPostgres)('a delivery too late for its departure', () => {
  const t = useTestStore('postgres');
  const redis = withPostgresAndRedis ? redisForTest() : undefined;
  let receiver: Receiver;
  let poster: Poster;

  beforeAll(async () => {
    receiver = await startReceiver();
    poster = createPoster({ timeoutMs: 2_000, allowPrivateNetworks: true, connect: { ca: createTestCertificate().cert } });
    // Every status a delivery goes through, in order.
    await t.db.exec(`
      CREATE TABLE status_history (seq serial PRIMARY KEY, delivery_id uuid NOT NULL, status text NOT NULL);
      CREATE FUNCTION note_status() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status IS DISTINCT FROM OLD.status THEN INSERT INTO status_history (delivery_id, status) VALUES (NEW.id, NEW.status); END IF;
          RETURN NEW;
        END $$;
      CREATE TRIGGER note_status AFTER UPDATE ON deliveries FOR EACH ROW EXECUTE FUNCTION note_status();`);
  });
  afterAll(async () => {
    await poster?.close();
    await receiver?.close();
    await redis?.cleanup();
  });

  /**
   * `count` queued deliveries to a new subscription paced at `maxPerSecond` (or, when null, at
   * the deliverer's `ratePerTarget`), and a deliverer with its own pacer.
   */
  async function queuedDeliveries(
    path: string,
    maxPerSecond: number | null,
    count: number,
    pacer: Pacer = createLocalPacer(1_000),
    base = receiver.url,
    ratePerTarget = 1_000,
  ) {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    const created = await t.store.hooks.create(
      { keyId: key.id, accountId },
      { eventType: 'new_contact', targetUrl: `${base}${path}`, maxPerSecond, secret: 'whsec_c2VjcmV0' },
      10,
    );
    if (created.outcome !== 'created') throw new Error(created.outcome);
    const phones = Array.from({ length: count }, () => `+1415555${String(phone++)}`);
    const jobs = await newContactDeliveries(t.store, accountId, phones);
    const metrics = createMetrics();
    const deliverer = createDeliverer({
      store: t.store,
      pacer,
      poster,
      settings: { ratePerTarget, maxWaitMs: 60_000 },
      metrics,
      log,
      secretsKey: undefined,
      parking: { queue: collectingQueue<DeliveryJobData>().queue, keepsDelayedJobs: true },
      stopping: new AbortController().signal,
      disableRule: { afterMs: 86_400_000, minFailures: 1_000_000 },
      turnOf: createTurnCounter(),
    });
    return { jobs, deliverer, metrics };
  }

  /**
   * Runs the handler as the line would (again at the time it asks), and a delivery it parks as its
   * job of the deliveries queue would (read again from its row at its time), until it is done;
   * then its outcome is recorded. Returns how many times it went to the gate for a departure (not
   * only its place): one claim given back makes that two.
   */
  async function deliverUntilDone(deliverer: ReturnType<typeof createDeliverer>, delivery: Delivery) {
    let sends = 0;
    for (let next: Delivery | undefined = delivery; next;) {
      if (deliverer.needsRoom(next)) sends++;
      const step = await deliverer.deliver(next, new AbortController().signal, () => {});
      if ('again' in step) {
        if (step.again.runAt > Date.now()) await sleep(step.again.runAt - Date.now());
        next = step.again.data;
        continue;
      }
      const report = await step.done;
      next = undefined;
      if (report.status === 'queued') {
        await sleep(Math.max(0, Date.parse(report.due_at!) - Date.now()));
        next = (await t.store.deliveries.find([delivery.id]))[0];
      }
    }
    await deliverer.settled();
    return sends;
  }

  /** Holds the row of `deliveryId` in another transaction for ROW_HELD_MS (its claim waits that long); `released` says when it let go. */
  async function holdRow(deliveryId: string): Promise<{ released: Promise<void> }> {
    let held!: () => void;
    const rowHeld = new Promise<void>((resolve) => (held = resolve));
    const holding = t.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
      held();
      await sleep(ROW_HELD_MS);
    });
    await rowHeld;
    return { released: holding };
  }

  /** Delivers `job` while another transaction holds its row for ROW_HELD_MS. */
  async function deliverWithRowHeld(deliverer: ReturnType<typeof createDeliverer>, job: Delivery) {
    const row = await holdRow(job.id);
    const runs = await deliverUntilDone(deliverer, job);
    await row.released;
    return runs;
  }

  /** When each POST to `path` reached the receiver. */
  const arrivalsAt = (path: string) => receiver.requests.filter((request) => request.path === path).map((request) => request.receivedAt);
  /** All `count` POSTs to `path` arrived, no sliding second held more than 5 (their rate), and some started late. */
  async function expectPacedDespiteLateStarts(path: string, count: number, metrics: ReturnType<typeof createMetrics>) {
    const arrivals = arrivalsAt(path);
    expect(arrivals).toHaveLength(count);
    expect(busiestWindow(arrivals, 1_000)).toBeLessThanOrEqual(5);
    expect((await metrics.lateStarts.get()).values[0]?.value).toBeGreaterThanOrEqual(1);
  }
  const history = async (deliveryId: string) =>
    (await t.db.query<{ status: string }>('SELECT status FROM status_history WHERE delivery_id = $1 ORDER BY seq', [deliveryId])).rows.map((row) => row.status);
  const lateCount = async (metrics: ReturnType<typeof createMetrics>) => (await metrics.lateDepartures.get()).values[0]?.value ?? 0;

  it('takes a second departure at once when the gate has one, keeping its claim', async () => {
    const { jobs, deliverer, metrics } = await queuedDeliveries('/late/fast', null, 2);
    await deliverUntilDone(deliverer, jobs[0]!);
    // The first claim on a new connection can be late too (it connects and plans): counted from here.
    const lateBefore = await lateCount(metrics);
    const job = jobs[1]!;
    expect(await deliverWithRowHeld(deliverer, job)).toBe(1);
    expect(await history(job.id)).toStrictEqual(['sending', 'delivered']);
    expect(arrivalsAt('/late/fast')).toHaveLength(2);
    expect((await lateCount(metrics)) - lateBefore).toBe(1);
  });

  it('gives the claim back when the next departure is further off, and sends it then, once', async () => {
    // 1/s, and a departure to the target granted just now, spaced for a handshake: the next is 1.33 s
    // away (a window after the handshake's allowance). The row is held past it, and the departure
    // after that is a second further. A grant, not a sent POST: a POST's quick start would bring the
    // next to 1.08 s, and whether it is far enough to park would hang on the ms the POST took.
    const pacer = createLocalPacer(1_000);
    const { jobs, deliverer, metrics } = await queuedDeliveries('/late/slow', 1, 1, pacer);
    const job = jobs[0]!;
    const first = await pacer.gate({ targetUrl: job.targetUrl, accountId: job.accountId, perSecond: 1, maxWaitMs: 60_000, newConnection: true });
    expect(first.kind).toBe('go');
    const lateBefore = await lateCount(metrics);
    // Its place is over a second away: it is parked until then (postponed in its row, so before the row is held).
    const step = await deliverer.deliver(job, new AbortController().signal, () => {});
    const parked = 'done' in step ? await step.done : undefined;
    expect(parked?.status).toBe('queued');
    const dueAt = Date.parse(parked!.due_at!);
    expect(dueAt).toBeGreaterThan(Date.now() + 1_000);
    // Back at its time, as its job of the deliveries queue brings it (read from its row, with its
    // place), its row held since before then, so its claim commits late.
    const row = await holdRow(job.id);
    await sleep(dueAt - Date.now());
    const [found] = await t.store.deliveries.find([job.id]);
    expect(found?.place).toEqual(expect.any(Number));
    await deliverUntilDone(deliverer, found!);
    await row.released;
    expect(await history(job.id)).toStrictEqual(['sending', 'queued', 'sending', 'delivered']);
    expect(arrivalsAt('/late/slow')).toHaveLength(1);
    expect((await lateCount(metrics)) - lateBefore).toBe(1);
  });

  it('sends a claim late for its departure at once, giving nothing back, at a target paced faster than any receiver counts', async () => {
    // No max_per_second: paced at a DELIVERY_RATE_PER_TARGET above MAX_PER_SECOND_RANGE, a cap no receiver counts to.
    const ratePerTarget = MAX_PER_SECOND_RANGE.max * 10;
    const pacer = createLocalPacer(1_000);
    const gates: GateRequest[] = [];
    const counting: Pacer = { ...pacer, gate: (request) => (gates.push(request), pacer.gate(request)) };
    const { jobs, deliverer, metrics } = await queuedDeliveries('/late/unpaced-claim', null, 1, counting, receiver.url, ratePerTarget);
    const job = jobs[0]!;
    expect(await deliverWithRowHeld(deliverer, job)).toBe(1);
    expect(await history(job.id)).toStrictEqual(['sending', 'delivered']);
    expect(arrivalsAt('/late/unpaced-claim')).toHaveLength(1);
    // One departure granted, no second one asked for, and nothing counted late.
    expect(gates).toHaveLength(1);
    expect(await lateCount(metrics)).toBe(0);
  });

  const pacers: Array<[string, () => Pacer]> = [['in process', () => createLocalPacer(1_000)]];
  if (withPostgresAndRedis) pacers.push(['in Redis', () => createRedisPacer({ target: redis!.target, prefix: redis!.prefix }, 1_000, log)]);
  it.each(pacers)('keeps every sliding second at the receiver within the rate when handshakes take longer than allowed (pacer %s)', async (name, makePacer) => {
    // Every connection through this hop is ready only after a handshake longer than a new
    // connection's allowance and the lateness allowed: the POSTs on them start late, unaborted.
    const slow = await startSlowHandshakes(Number(new URL(receiver.url).port), 2 * (NEW_CONNECTION_ALLOWANCE_MS + LATE_DEPARTURE_MS));
    const pacer = makePacer();
    const path = `/late/start/${name.replace(' ', '-')}`;
    try {
      const { jobs, deliverer, metrics } = await queuedDeliveries(path, 5, 8, pacer, slow.url);
      await Promise.all(jobs.map((job) => deliverUntilDone(deliverer, job)));
      await expectPacedDespiteLateStarts(path, 8, metrics);
    } finally {
      await pacer.close();
      await slow.close();
    }
  });

  it.runIf(withPostgresAndRedis)(
    "counts a POST late from the soonest its departure may have been: a gate's answer that reached its worker late spaces the target's next departures",
    async () => {
      // Redis's answers to this pacer pass a hop that can hold them: a worker too busy to read its
      // socket, or a slow path back. The departure the gate granted is then nearer, or past, when
      // the worker learns of it, and its POST leaves that much after the time the pacer recorded.
      const redis = redisForTest();
      const redisUrl = new URL(redis.url);
      const hop = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
      const pacer = createRedisPacer({ target: { url: `redis://127.0.0.1:${hop.port}${redisUrl.pathname}` }, prefix: redis.prefix }, 1_000, log);
      const path = '/late/answer';
      try {
        const { jobs, deliverer, metrics } = await queuedDeliveries(path, 5, 11, pacer);
        await Promise.all(jobs.slice(0, 5).map((job) => deliverUntilDone(deliverer, job)));
        // The sixth gets its answers 200 ms late, the five after it on time: without counting its
        // lateness, the five would be spaced from when it was granted, not from when it arrived.
        hop.delayReplies(200);
        await deliverUntilDone(deliverer, jobs[5]!);
        hop.delayReplies(0);
        await Promise.all(jobs.slice(6).map((job) => deliverUntilDone(deliverer, job)));
        await expectPacedDespiteLateStarts(path, 11, metrics);
      } finally {
        await pacer.close();
        await hop.close();
        await redis.cleanup();
      }
    },
  );

  it('counts a handshake within its allowance as on time: the first POST to a target is not reported late for it', async () => {
    // Longer than the lateness allowed on a reused connection, well within a new one's allowance.
    const slow = await startSlowHandshakes(Number(new URL(receiver.url).port), NEW_CONNECTION_ALLOWANCE_MS / 2);
    try {
      const { jobs, deliverer, metrics } = await queuedDeliveries('/late/handshake', 5, 1, createLocalPacer(1_000), slow.url);
      await deliverUntilDone(deliverer, jobs[0]!);
      expect(arrivalsAt('/late/handshake')).toHaveLength(1);
      expect((await metrics.lateStarts.get()).values[0]?.value ?? 0).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('reports no late start for a target paced faster than any receiver counts, however late its POSTs start', async () => {
    const slow = await startSlowHandshakes(Number(new URL(receiver.url).port), 2 * (NEW_CONNECTION_ALLOWANCE_MS + LATE_DEPARTURE_MS));
    try {
      // No max_per_second: paced at a DELIVERY_RATE_PER_TARGET above MAX_PER_SECOND_RANGE, a cap no receiver counts to.
      const ratePerTarget = MAX_PER_SECOND_RANGE.max * 10;
      const { jobs, deliverer, metrics } = await queuedDeliveries('/late/unpaced', null, 8, createLocalPacer(1_000), slow.url, ratePerTarget);
      await Promise.all(jobs.map((job) => deliverUntilDone(deliverer, job)));
      expect(arrivalsAt('/late/unpaced')).toHaveLength(8);
      expect((await metrics.lateStarts.get()).values[0]?.value ?? 0).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it.runIf(withPostgresAndRedis)(
    'gives the claim back when the pacer does not answer within LATE_DEPARTURE_MS (Redis silent), and sends it once Redis is back',
    async () => {
      const redis = redisForTest();
      const redisUrl = new URL(redis.url);
      // A plain TCP proxy (written for PostgreSQL's outages), here in front of Redis.
      const proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
      const pacer = createRedisPacer({ target: { url: `redis://127.0.0.1:${proxy.port}${redisUrl.pathname}` }, prefix: redis.prefix }, 1_000, log);
      let silent = false;
      try {
        const { jobs, deliverer } = await queuedDeliveries('/late/silent', null, 2, pacer);
        await deliverUntilDone(deliverer, jobs[0]!);
        await sleep(NEW_CONNECTION_ALLOWANCE_MS);
        const job = jobs[1]!;
        const row = await holdRow(job.id);
        const delivering = deliverUntilDone(deliverer, job);
        await sleep(ROW_HELD_MS / 2); // past the gate; the claim waits for the row
        proxy.stall();
        silent = true;
        await row.released;
        // The claim committed late, and the pacer is silent: it is not held while the pacer waits.
        await waitUntil(async () => (await history(job.id)).length >= 2, 2_000);
        expect(await history(job.id)).toStrictEqual(['sending', 'queued']);
        proxy.restore();
        silent = false;
        await delivering;
        expect(await history(job.id)).toStrictEqual(['sending', 'queued', 'sending', 'delivered']);
        expect(arrivalsAt('/late/silent')).toHaveLength(2);
      } finally {
        if (silent) proxy.restore(); // a failed check must not leave the pacer's connection silent
        await pacer.close();
        await proxy.close();
        await redis.cleanup();
      }
    },
  );
});
