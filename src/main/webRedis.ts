import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { bullBoard } from '../api/bullBoard.js';
import type { Config } from '../config.js';
import { QUEUE_NAMES } from '../queue/bullmq.js';
import { createRedisNewEvents } from '../queue/redisNewEvents.js';

/**
 * What the web process has on Redis when REDIS_URL is set: the ring that tells workers new events
 * are in the outbox, Bull Board, and the shared rate-limit count. Loaded only then: BullMQ and
 * Bull Board hold about 20 MiB that the embedded default has no use for.
 */
export function connectWebToRedis(config: Config & { REDIS_URL: string }, log: Logger) {
  const redis = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX };
  // Fail fast, like the signal: a request never waits on Redis for its rate-limit count. Counts
  // of concurrent requests share a round trip (auto-pipelining).
  const rateLimitRedis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000, enableAutoPipelining: true });
  rateLimitRedis.on('error', (error) => log.warn({ err: error }, 'rate-limit Redis unavailable; requests are not counted meanwhile'));
  return {
    newEvents: createRedisNewEvents(redis, log),
    admin: bullBoard({ ...redis, queueNames: QUEUE_NAMES, writable: config.BULL_BOARD_WRITABLE }),
    rateLimitRedis,
  };
}
