import { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNamespace } from '../../kit/redis.js';
import { startRedisCluster, type RedisCluster } from '../../kit/redisCluster.js';
import { JITTER_ALLOWANCE_MS } from '../../src/domain/pacing.js';
import { createBullQueue, startBullConsumer } from '../../src/queue/bullmq.js';
import { createRedisPacer, pacerKeys } from '../../src/workers/redisPacer.js';
import type { GateAnswer } from '../../src/workers/pacer.js';
import { waitUntil } from '../support/processes.js';
import { withRedisCluster } from '../support/redisShapes.js';

const log = pino({ level: 'silent' });
const kept = { completedMs: 60_000, completedCount: 100, failedMs: 60_000 };
const RATE = 5;
const INTERVAL_US = ((1000 + JITTER_ALLOWANCE_MS) / RATE) * 1000;

const placeOf = (answer: GateAnswer) => (answer.kind === 'too_late' ? Number.NaN : answer.place);

/**
 * The transport on a real 3-master Redis Cluster, in this process: every script's keys in one
 * slot (no CROSSSLOT, no undeclared key), the pace shared by clients exactly as on one server,
 * jobs taken by the workers of their own deployment, the workers counted over every node, and
 * QUEUE_PREFIX keeping two deployments apart.
 * The processes on a cluster are in the delivery, pacing, fairness and fault suites.
 */
describe.runIf(withRedisCluster)('Redis Cluster', () => {
  let cluster: RedisCluster;
  let inspect: Cluster;
  const deployments = () => {
    const a = clusterNamespace(cluster.nodes, 'deployment-a');
    const b = clusterNamespace(cluster.nodes, 'deployment-b');
    return [a, b] as const;
  };
  const slotOf = async (key: string) => Number(await inspect.call('CLUSTER', 'KEYSLOT', key));

  beforeAll(async () => {
    cluster = await startRedisCluster();
    inspect = new Cluster(cluster.nodes.split(','));
  });
  afterAll(async () => {
    inspect?.disconnect();
    await cluster?.stop();
  });

  it('shares one target’s pace and holds between pacers exactly as one server does, and keeps another prefix’s pace apart', async () => {
    const [a, b] = deployments();
    const pacers = [createRedisPacer(a, 1_000, log), createRedisPacer(a, 1_000, log)];
    const other = createRedisPacer(b, 1_000, log);
    try {
      const gate = (pacer: (typeof pacers)[number], targetUrl = 'https://hooks.zapier.example/hook/1') =>
        pacer.gate({ targetUrl, accountId: 'acme', perSecond: RATE, maxWaitMs: 60_000, newConnection: false });
      // Two workers' pacers take turns: each place is one interval after the one before, whoever asked.
      const places: number[] = [];
      for (let i = 0; i < 6; i++) places.push(placeOf(await gate(pacers[i % 2]!)));
      expect(places.slice(1).map((place, i) => place - places[i]!)).toStrictEqual(Array(5).fill(INTERVAL_US));
      // The same target under another QUEUE_PREFIX has a line of its own: it leaves at once.
      expect(await gate(other)).toMatchObject({ kind: 'go', inMs: 0 });
      // Targets on many hosts: their keys sit in different slots, and each call's two keys in one.
      const hosts = Array.from({ length: 8 }, (_, i) => `https://host-${i}.example/hook`);
      for (const url of hosts) expect((await gate(pacers[0]!, url)).kind).toBe('go');
      const keys = pacerKeys(a.prefix);
      const slots = await Promise.all(hosts.map((url) => slotOf(keys.target(url))));
      expect(new Set(slots).size).toBeGreaterThan(1);
      for (const url of hosts) expect(await slotOf(keys.budget('acme', url))).toBe(await slotOf(keys.target(url)));
      // A hold (a 429's Retry-After), its own script, seen by the other worker's pacer.
      await pacers[0]!.hold(hosts[0]!, 5_000);
      const held = await gate(pacers[1]!, hosts[0]);
      expect(held.kind === 'wait' && held.waitMs).toBeGreaterThan(4_000);
    } finally {
      await Promise.all([...pacers, other].map((pacer) => pacer.close()));
    }
  });

  it('hands each deployment’s jobs to its own workers only, both queues’ keys of a deployment in one slot', async () => {
    const [a, b] = deployments();
    const ran = { a: [] as number[], b: [] as number[] };
    const options = { concurrency: 4, lockMs: 5_000, kept, log };
    const consumers = [
      startBullConsumer<{ n: number }, void>(a, 'deliveries', async ({ n }) => void ran.a.push(n), options),
      startBullConsumer<{ n: number }, void>(a, 'events', async ({ n }) => void ran.a.push(n), options),
      startBullConsumer<{ n: number }, void>(b, 'deliveries', async ({ n }) => void ran.b.push(n), options),
    ];
    const producers = [
      createBullQueue<{ n: number }>(a, 'deliveries', { log, failFast: true, kept }),
      createBullQueue<{ n: number }>(a, 'events', { log, failFast: true, kept }),
      createBullQueue<{ n: number }>(b, 'deliveries', { log, failFast: true, kept }),
    ];
    try {
      // Due in a second: a producer connects to the cluster and counts them well before then.
      const soon = Date.now() + 1_000;
      await producers[0]!.add([1, 2, 3].map((n) => ({ id: `a.${n}`, name: 'paced', data: { n }, runAt: soon })));
      expect((await producers[0]!.counts()).delayed).toBe(3);
      await producers[1]!.add([{ id: 'event-1', name: 'new_contact', data: { n: 4 } }]);
      await producers[2]!.add([11, 12].map((n) => ({ id: `b.${n}`, name: 'paced', data: { n }, runAt: soon })));
      await waitUntil(() => ran.a.length === 4 && ran.b.length === 2, 10_000);
      expect(ran.a.sort()).toStrictEqual([1, 2, 3, 4]);
      expect(ran.b.sort()).toStrictEqual([11, 12]);

      await producers[0]!.add([{ id: 'a.later', name: 'paced', data: { n: 5 }, runAt: Date.now() + 60_000 }]);
      const bullKeys = (await Promise.all(inspect.nodes('master').map((node) => node.keys(`{${a.prefix}}:*`)))).flat();
      expect(bullKeys.some((key) => key.includes(':events:'))).toBe(true);
      expect(bullKeys.some((key) => key.includes(':deliveries:'))).toBe(true);
      expect(new Set(await Promise.all(bullKeys.map(slotOf))).size).toBe(1);
    } finally {
      await Promise.all([...consumers, ...producers].map((each) => each.close()));
      await a.cleanup();
      await b.cleanup();
    }
  });

  it("counts the worker processes consuming a deployment's events queue, whichever node each connected to", async () => {
    const [a, b] = deployments();
    const web = createBullQueue(a, 'events', { log, failFast: true, kept });
    const options = { concurrency: 1, lockMs: 5_000, kept, log };
    const ours = [0, 1, 2].map(() => startBullConsumer(a, 'events', async () => undefined, options));
    // Another deployment's worker is on the cluster too: it is not one of ours.
    const stranger = startBullConsumer(b, 'events', async () => undefined, options);
    try {
      await waitUntil(async () => (await web.workers()) === 3, 10_000);
      await ours.pop()!.close();
      await waitUntil(async () => (await web.workers()) === 2, 10_000);
    } finally {
      await Promise.all([...ours, stranger, web].map((each) => each.close()));
      await a.cleanup();
      await b.cleanup();
    }
  });

  // Last: it takes the cluster away.
  it('gives no count of workers while the cluster is away, rather than none', async () => {
    const [a] = deployments();
    const web = createBullQueue(a, 'events', { log, failFast: true, kept });
    try {
      expect(await web.workers()).toBe(0);
      await cluster.kill();
      await waitUntil(
        async () =>
          (await web.workers().then(
            () => 'counted',
            () => 'failed',
          )) === 'failed',
        10_000,
      );
    } finally {
      await web.close();
    }
  });
});
