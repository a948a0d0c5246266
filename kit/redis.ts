import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * A key prefix of its own on a shared Redis (the service's QUEUE_PREFIX), so runs on one Redis
 * never meet, and `cleanup`, which deletes every key under it and says how many there were.
 */
export function redisNamespace(url: string, label: string) {
  const prefix = `${label}-${randomBytes(5).toString('hex')}`;
  return {
    url,
    prefix,
    async cleanup(): Promise<number> {
      const redis = new Redis(url);
      let removed = 0;
      try {
        for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
          if (keys.length > 0) removed += await redis.del(...keys);
        }
      } finally {
        redis.disconnect();
      }
      return removed;
    },
  };
}
