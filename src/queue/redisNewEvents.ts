import type { Logger } from 'pino';
import type { NewEventsSignal } from './newEvents.js';
import { connectRedis, serversOf, type RedisSettings } from './redisConnection.js';

const channelOf = (prefix: string) => `${prefix}:new-events`;

/**
 * Rings coalesce twice. Notifies made together make one ring, sent once they all are: the
 * callers of one group commit resume together when it commits, and each notifies. And while a
 * ring is on its way, later notifies make one more after it, however many there were: their
 * events may have committed after the fan-out woke. A thousand events a second then cost at
 * most a ring per commit, not a thousand (two per commit without the first kind).
 */
function coalesced(publish: () => Promise<unknown>, log: Pick<Logger, 'debug'>) {
  let queued = false;
  let publishing = false;
  let again = false;
  const ring = () => {
    publishing = true;
    again = false;
    publish()
      .catch((error: unknown) => log.debug({ err: error }, 'new-events signal not sent; the fan-out finds the events at its next poll'))
      .finally(() => {
        publishing = false;
        if (again) ring();
      });
  };
  // Queued behind the continuations already resumed, so it runs once every one of them notified.
  const send = () => {
    queued = false;
    if (publishing) again = true;
    else ring();
  };
  return () => {
    if (queued) return;
    queued = true;
    queueMicrotask(send);
  };
}

/**
 * The web process's side: publishes on Redis, failing fast when Redis is away (requests never
 * wait on it). `listening` counts the workers subscribed to the ring (PUBSUB NUMSUB): a worker's
 * subscription ends with its connection, so none listening means no worker is running. A
 * cluster carries a publish to every node, but each node counts only the subscribers connected
 * to it, so the count is the sum over all of them.
 */
export function createRedisNewEvents({ target, prefix }: RedisSettings, log: Logger): NewEventsSignal & { listening(): Promise<number> } {
  const redis = connectRedis(target, 'fails-fast');
  redis.on('error', (error) => log.warn({ err: error }, 'new-events signal: Redis unavailable; fan-out falls back to polling'));
  const channel = channelOf(prefix);
  return {
    notify: coalesced(() => redis.publish(channel, '1'), log),
    ping: async () => {
      await redis.ping();
    },
    listening: async () => {
      const counts = await Promise.all(serversOf(redis).map(async (server) => ((await server.pubsub('NUMSUB', channel)) as [string, number])[1]));
      return counts.reduce((sum, count) => sum + count, 0);
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

/** A worker's side: calls `listener` on every ring; waits for Redis when it is away. */
export function listenForNewEvents({ target, prefix }: RedisSettings, listener: () => void, log: Logger) {
  const redis = connectRedis(target, 'waits');
  redis.on('error', (error) => log.warn({ err: error }, 'new-events signal: waiting for Redis; fan-out polls meanwhile'));
  redis.on('message', listener);
  void redis.subscribe(channelOf(prefix)).catch((error: unknown) => log.warn({ err: error }, 'could not subscribe to the new-events signal'));
  return {
    close: async () => {
      redis.disconnect();
    },
  };
}
