import type { Logger } from 'pino';
import { bullBoard } from '../api/bullBoard.js';
import { keptJobs, type Config } from '../config.js';
import type { FiredEvent } from '../domain/events.js';
import { createBullQueue } from '../queue/bullmq.js';
import { connectRedis, whenReady, type RedisTarget } from '../queue/redisConnection.js';

/**
 * How long a starting web process waits for Redis before it listens: until then a request would
 * pass the rate limit uncounted, and an event's job wait for the relay. Past it the process
 * listens anyway, as it keeps answering when Redis goes away later.
 */
const START_WAIT_MS = 5_000;

/**
 * What the web process has on Redis (REDIS_URL or REDIS_CLUSTER_NODES): the `events` queue it adds
 * fired events to, Bull Board, and the shared rate-limit count. Loaded only then: BullMQ and Bull
 * Board take memory that the embedded default has no use for.
 */
export function connectWebToRedis(config: Config, target: RedisTarget, log: Logger) {
  const redis = { target, prefix: config.QUEUE_PREFIX };
  // Fail fast, like the queue: a request never waits on Redis for its rate-limit lease. Leases
  // of different keys taken in one tick share a round trip (auto-pipelining). Its script declares
  // its one key, so on a cluster each key's count goes to the key's own slot.
  const rateLimitRedis = connectRedis(target, 'fails-fast', { autoPipelining: true, commandTimeoutMs: 1_000 });
  rateLimitRedis.on('error', (error) => log.warn({ err: error }, 'rate-limit Redis unavailable; requests are not counted meanwhile'));
  const kept = keptJobs(config);
  const events = createBullQueue<FiredEvent>(redis, 'events', { log, failFast: true, kept });
  return {
    events,
    /** Both queues, for the web's gauges; `deliveries` only read. */
    deliveriesForGauges: createBullQueue(redis, 'deliveries', { log, failFast: true, kept }),
    admin: bullBoard({ ...redis, writable: config.BULL_BOARD_WRITABLE }),
    rateLimitRedis,
    /** Waits, START_WAIT_MS at most, for the connections a request uses; says whether they are ready. */
    async connected() {
      const ready = await Promise.all([whenReady(rateLimitRedis, START_WAIT_MS), events.connected(START_WAIT_MS)]);
      return ready.every(Boolean);
    },
  };
}
