/**
 * Figure 10: scale-out (issue 18 part 4). The delivery stage alone, as figure 2's diagnostic
 * measures it (a backlog of calls ingested while no worker runs, then drained with the web
 * process idle), with 1, 2 and 4 worker processes, on the run's Redis (one server) and on a
 * Redis Cluster of 3 masters started for the figure (kit/redisCluster.ts). Each drain's CPU is
 * recorded per process group, and per worker and per Redis server in the figure's data, so that
 * deliveries per second per core can be derived for a machine with more cores than this one.
 */
import os from 'node:os';
import { Redis } from 'ioredis';
import { startRedisCluster } from '../../kit/redisCluster.js';
import type { BenchContext } from '../context.js';
import { ACCOUNT, CHANNEL, drain, MOST_OTHER_SHARE, SHAPE_LABEL, sum, type Drain, type Shape } from '../measure/backlogDrain.js';
import { fmt, ratioRow, type FigureResult, type Row } from '../results.js';
import { ENGINE_ENV } from '../settings.js';
import { startPostgresStack } from '../support/stacks.js';

export const SCALE_OUT_WORKERS = [1, 2, 4];
/** Calls of the sizing drain (1 worker, single Redis) and of each shape's unmeasured warm-up drain. */
const PROBE_CALLS = 1_500;
/** How long a 1-worker drain should last at BENCH_SCALE=1; 2 and 4 workers take less by their speed-up. */
const TARGET_SECONDS = 8;
const FEWEST_CALLS = 1_000;
const MOST_CALLS = 60_000;
/**
 * Each process's pool: 4 workers and the web at the engine figures' 50 each would ask for more
 * than PostgreSQL's 100 connections (the workers' writes are group commits; they need few).
 */
const POOL_SIZE = 10;

/** The pid of each Redis server at `places` (INFO server), for telling the shape's servers apart from others on the machine. */
async function redisServerPids(places: (string | { host: string; port: number })[]): Promise<number[]> {
  const options = { lazyConnect: true, maxRetriesPerRequest: 1 };
  return Promise.all(
    places.map(async (place) => {
      const client = typeof place === 'string' ? new Redis(place, options) : new Redis({ ...place, ...options });
      try {
        await client.connect();
        const info = await client.info('server');
        return Number(/process_id:(\d+)/.exec(info)?.[1] ?? NaN);
      } finally {
        client.disconnect();
      }
    }),
  );
}

/** A shape's stack (web only; workers per drain), its subscription, a warm-up drain, then a drain per worker count. */
async function measureShape(ctx: BenchContext, shape: Shape, env: Record<string, string>, redisPids: number[], size: (probe: Drain) => number) {
  const labels = { web: `web (scale-out, ${SHAPE_LABEL[shape]})`, worker: `worker (scale-out, ${SHAPE_LABEL[shape]})` };
  const stack = await startPostgresStack(ctx, { ...ENGINE_ENV, DATABASE_POOL_SIZE: String(POOL_SIZE), ...env }, labels, 0);
  try {
    ctx.progress(`figure 10: ${SHAPE_LABEL[shape]}, warm-up drain of ${fmt(PROBE_CALLS)} calls, 1 worker`);
    const probe = await drain(ctx, stack, shape, 1, PROBE_CALLS, redisPids);
    const events = size(probe);
    const drains: Drain[] = [];
    for (const workers of SCALE_OUT_WORKERS) {
      ctx.progress(`figure 10: ${SHAPE_LABEL[shape]}, backlog of ${fmt(events)} calls drained by ${workers} worker${workers > 1 ? 's' : ''}`);
      const measured = await drain(
        ctx,
        stack,
        shape,
        workers,
        events,
        redisPids,
        `scale-out: ${SHAPE_LABEL[shape]}, ${workers} worker${workers > 1 ? 's' : ''} drain a backlog`,
      );
      ctx.progress(
        `  ${fmt(measured.perSecond)} deliveries/s first to last (${fmt(measured.allUpPerSecond)}/s once all ${workers} were up, ${fmt(measured.startSpreadMs)} ms after the first receipt)`,
      );
      drains.push(measured);
    }
    return drains;
  } finally {
    await stack.stop();
  }
}

const OURS = ['web', 'worker', 'postgres', 'redis', 'receiver', 'bench'];

/** One line per drain of where the CPU went, for the notes. */
function cpuNote(drain: Drain) {
  const cpu = drain.cpuMsPerDelivery;
  const worker = drain.perWorker.map((process) => fmt(process.msPerDelivery, 3)).join(' + ');
  const redis = drain.perRedisServer.map((process) => fmt(process.msPerDelivery, 3)).join(' + ');
  const service = (cpu.worker ?? 0) + (cpu.postgres ?? 0) + sum(drain.perRedisServer.map((process) => process.msPerDelivery)) + (cpu.web ?? 0);
  return (
    `${SHAPE_LABEL[drain.shape]}, ${drain.workers} worker${drain.workers > 1 ? 's' : ''}: CPU ms per delivery worker ${fmt(cpu.worker ?? 0, 3)} (per process ${worker}), ` +
    `web ${fmt(cpu.web ?? 0, 3)}, postgres ${fmt(cpu.postgres ?? 0, 3)}, the shape's redis-server${drain.perRedisServer.length > 1 ? 's' : ''} ${redis}, receiver ${fmt(cpu.receiver ?? 0, 3)}; ` +
    `${fmt(drain.updatesPerDelivery, 2)} deliveries-row updates per delivery (2 without late departures); service total ${fmt(service, 3)} → ${fmt(1000 / service)} deliveries/s per core; machine ${fmt(drain.utilisation * 100)}% busy, other processes ${fmt(cpu.other ?? 0, 3)} (${fmt(drain.otherShare * 100)}% of the machine${drain.otherShare > MOST_OTHER_SHARE ? ', SKEWED' : ''})${drain.attempts > 1 ? `, attempt ${drain.attempts}` : ''}`
  );
}

/**
 * Figure 10: the run's database and Redis prefix; a subscription of its own on the receiver. The
 * cluster is started here and stopped before returning (also when a drain fails).
 */
export async function scaleOut(ctx: BenchContext): Promise<FigureResult> {
  const cores = os.cpus().length;
  // The subscription lives in PostgreSQL, so one serves both shapes; a web process of either can create it.
  const setup = await startPostgresStack(ctx, ENGINE_ENV, { web: 'web (scale-out setup)', worker: 'worker (scale-out setup)' }, 0);
  try {
    await setup.client.subscribe(await setup.client.newKey(ACCOUNT), 'new_conversation', `${ctx.receiver.url}${CHANNEL}`);
  } finally {
    await setup.stop();
  }

  // A Redis elsewhere (BENCH_REDIS_URL on another host) has no pid here: its CPU is then not counted.
  const singlePids = await redisServerPids([ctx.settings.redisUrl]);
  let events = 0;
  const single = await measureShape(ctx, 'single', {}, singlePids, (probe) => {
    events = Math.min(MOST_CALLS, Math.max(FEWEST_CALLS, Math.round(probe.perSecond * TARGET_SECONDS * ctx.settings.scale)));
    return events;
  });

  ctx.progress('figure 10: starting a Redis Cluster of 3 masters');
  const cluster = await startRedisCluster({ masters: 3 });
  let clustered: Drain[];
  try {
    const clusterPids = await redisServerPids(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    clustered = await measureShape(ctx, 'cluster', { REDIS_CLUSTER_NODES: cluster.nodes }, clusterPids, () => events);
  } finally {
    await cluster.stop();
  }

  const drains = [...single, ...clustered];
  const rows: Row[] = drains.map((measured) => {
    const base = drains.find((other) => other.shape === measured.shape && other.workers === 1)!;
    return ratioRow({
      figure: '10',
      what:
        `Scale-out, delivery stage alone: ${measured.workers} worker process${measured.workers > 1 ? 'es' : ''} (${SHAPE_LABEL[measured.shape]}) drain a backlog of ${fmt(measured.events)} calls, web idle ` +
        `(first to last receipt; once all ${measured.workers} were up: ${fmt(measured.allUpPerSecond)}/s)` +
        (measured.otherShare > MOST_OTHER_SHARE ? `; SKEWED: other processes took ${fmt(measured.otherShare * 100)}% of the machine` : ''),
      measured: `${fmt(measured.perSecond)} deliveries/s`,
      reference: `${fmt(base.perSecond)} deliveries/s: 1 worker, ${SHAPE_LABEL[measured.shape]}, same run`,
      ratio: measured.perSecond / base.perSecond,
    });
  });
  const ours = (drain: Drain) => sum(OURS.map((group) => drain.cpuMsPerDelivery[group] ?? 0));
  return {
    data: { scaleOut: { cores, workerCounts: SCALE_OUT_WORKERS, events, drains: drains.map((drain) => ({ ...drain, oursMsPerDelivery: ours(drain) })) } },
    rows,
    notes: [
      `Figure 10: this machine has ${cores} cores, shared by the workers, the web process (idle while a backlog drains), PostgreSQL, Redis, the receiver and the bench itself, so the curve flattens once the workers and what they use fill ${cores} cores; ` +
        `the CPU ms per delivery below (over the window once every worker had started, the same window as the CPU table's "scale-out" rows) is what predicts more cores: deliveries/s per core ≈ 1000 ÷ the service's CPU ms per delivery (workers + PostgreSQL + Redis). ` +
        `Services run with the engine figures' pacing (${Object.entries(ENGINE_ENV)
          .filter(([name]) => name !== 'DATABASE_POOL_SIZE')
          .map(([name, value]) => `${name}=${value}`)
          .join(
            ', ',
          )}) and DATABASE_POOL_SIZE=${POOL_SIZE} (4 workers and the web at 50 would exceed PostgreSQL's 100 connections; a drain during which PostgreSQL refused a connection is measured again). ` +
        `Workers start together; the first→last rate includes their start (the "once all were up" rate does not). ` +
        `BullMQ's keys share one hash tag (bullPrefix), so on the cluster the queues sit on one master; the pacer's keys spread.`,
      ...drains.map((drain) => `Figure 10, ${cpuNote(drain)}.`),
    ],
  };
}
