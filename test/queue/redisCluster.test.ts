import { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNamespace } from '../../kit/redis.js';
import { startRedisCluster, type RedisCluster } from '../../kit/redisCluster.js';
import { RELAY_GRACE_MS } from '../../src/domain/delivery.js';
import { JITTER_ALLOWANCE_MS } from '../../src/domain/pacing.js';
import { createBullProducer, startBullWorker } from '../../src/queue/bullmq.js';
import { createRedisHandoff, listenForNewEvents, receiveHandoffs } from '../../src/queue/redisHandoff.js';
import type { QueuedDelivery } from '../../src/storage/events.js';
import { createRedisPacer, pacerKeys } from '../../src/workers/redisPacer.js';
import type { GateAnswer } from '../../src/workers/pacer.js';
import { waitUntil } from '../support/processes.js';
import { withRedisCluster } from '../support/redisShapes.js';

const log = pino({ level: 'silent' });
const RATE = 5;
const INTERVAL_US = ((1000 + JITTER_ALLOWANCE_MS) / RATE) * 1000;

const placeOf = (answer: GateAnswer) => (answer.kind === 'too_late' ? Number.NaN : answer.place);

/**
 * The transport on a real 3-master Redis Cluster, in this process: every script's keys in one
 * slot (no CROSSSLOT, no undeclared key), the pace shared by clients exactly as on one server,
 * deliveries handed to the workers of one deployment, the workers counted over every node, and QUEUE_PREFIX keeping two deployments apart.
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

  it('hands each deployment’s delayed jobs to its own workers only, every BullMQ key of a deployment in one slot', async () => {
    const [a, b] = deployments();
    const handed = { a: [] as number[], b: [] as number[] };
    const options = { concurrency: 4, lockMs: 5_000, log };
    const workers = [startBullWorker<{ n: number }>(a, 'deliveries', async ({ n }) => void handed.a.push(n), options), startBullWorker<{ n: number }>(b, 'deliveries', async ({ n }) => void handed.b.push(n), options)];
    const producers = [createBullProducer<{ n: number }>(a, 'deliveries', { log, failFast: true }), createBullProducer<{ n: number }>(b, 'deliveries', { log, failFast: true })];
    try {
      const soon = Date.now() + 300;
      await producers[0]!.add([1, 2, 3].map((n) => ({ id: `a.${n}`, data: { n }, runAt: soon })));
      await producers[1]!.add([11, 12].map((n) => ({ id: `b.${n}`, data: { n }, runAt: soon })));
      expect(await producers[0]!.counts()).toStrictEqual({ ready: 0, waiting: 3 });
      await waitUntil(() => handed.a.length === 3 && handed.b.length === 2, 10_000);
      expect(handed.a.sort()).toStrictEqual([1, 2, 3]);
      expect(handed.b.sort()).toStrictEqual([11, 12]);

      await producers[0]!.add([{ id: 'a.later', data: { n: 4 }, runAt: Date.now() + 60_000 }]);
      const bullKeys = (await Promise.all(inspect.nodes('master').map((node) => node.keys(`{${a.prefix}}:*`)))).flat();
      expect(bullKeys.length).toBeGreaterThan(0);
      expect(new Set(await Promise.all(bullKeys.map(slotOf))).size).toBe(1);
    } finally {
      await Promise.all([...workers, ...producers].map((each) => each.close()));
      await a.cleanup();
      await b.cleanup();
    }
  });

  it("hands each delivery to one of its own deployment's workers, and counts the workers subscribed on every node", async () => {
    const [a, b] = deployments();
    const web = createRedisHandoff(a, RELAY_GRACE_MS, log);
    const taken: QueuedDelivery[][] = [[], [], [], []];
    const taker = (i: number) => ({ room: () => 100, take: (rows: QueuedDelivery[]) => void taken[i]!.push(...rows) });
    const receivers = [0, 1, 2].map((i) => receiveHandoffs(a, taker(i), log));
    const listeners = [0, 1, 2].map(() => listenForNewEvents(a, () => {}, log));
    // Another deployment's worker is on the cluster too: it is not one of ours, and takes nothing of ours.
    const stranger = receiveHandoffs(b, taker(3), log);
    const strangerListening = listenForNewEvents(b, () => {}, log);
    try {
      await waitUntil(async () => (await web.listening()) === 3, 10_000);
      const handed = Array.from({ length: 300 }, (_, i) => ({ delivery_id: `d-${i}`, account_id: 'acct', target_url: 'https://hooks.example.com/receive', max_per_second: null, queued_at: new Date() }));
      for (let i = 0; i < handed.length; i += 30) web.handOff(handed.slice(i, i + 30));
      await waitUntil(() => taken.slice(0, 3).flat().length === handed.length, 10_000);
      expect(new Set(taken.slice(0, 3).flat().map((row) => row.delivery_id)).size).toBe(handed.length);
      expect(taken[3]).toStrictEqual([]);
      await listeners.pop()!.close();
      await waitUntil(async () => (await web.listening()) === 2, 10_000);
    } finally {
      await Promise.all([...receivers, ...listeners, stranger, strangerListening, web].map((each) => each.close()));
    }
  });

  // Last: it takes the cluster away.
  it('gives no count of listening workers while the cluster is away, rather than none', async () => {
    const [a] = deployments();
    const web = createRedisHandoff(a, RELAY_GRACE_MS, log);
    try {
      expect(await web.listening()).toBe(0);
      await cluster.kill();
      await waitUntil(async () => (await web.listening().then(() => 'counted', () => 'failed')) === 'failed', 10_000);
    } finally {
      await web.close();
    }
  });
});
