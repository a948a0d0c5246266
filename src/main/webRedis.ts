import type { Logger } from 'pino';
import { bullBoard } from '../api/bullBoard.js';
import type { Config } from '../config.js';
import { QUEUE_NAMES } from '../queue/bullmq.js';
import { connectRedis, type RedisTarget } from '../queue/redisConnection.js';
import { createRedisHandoff } from '../queue/redisHandoff.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';

/**
 * What the web process has on Redis (REDIS_URL or REDIS_CLUSTER_NODES): the handoff of new
 * deliveries to workers, Bull Board, and the shared rate-limit count. Loaded only
 * then: BullMQ and Bull Board hold about 20 MiB that the embedded default has no use for.
 */
export function connectWebToRedis(config: Config, target: RedisTarget, log: Logger) {
  const redis = { target, prefix: config.QUEUE_PREFIX };
  // Fail fast, like the handoff: a request never waits on Redis for its rate-limit lease. Leases
  // of different keys taken in one tick share a round trip (auto-pipelining). Its script declares
  // its one key, so on a cluster each key's count goes to the key's own slot.
  const rateLimitRedis = connectRedis(target, 'fails-fast', { autoPipelining: true, commandTimeoutMs: 1_000 });
  rateLimitRedis.on('error', (error) => log.warn({ err: error }, 'rate-limit Redis unavailable; requests are not counted meanwhile'));
  return {
    handoff: createRedisHandoff(redis, RELAY_GRACE_MS, log),
    admin: bullBoard({ ...redis, queueNames: QUEUE_NAMES, writable: config.BULL_BOARD_WRITABLE }),
    rateLimitRedis,
  };
}
