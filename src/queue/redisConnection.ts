import type { RedisOptions } from 'ioredis';

/** Where a process's queues, pacer and signals live in Redis: the server, and the key prefix. */
export interface BullSettings {
  redisUrl: string;
  prefix: string;
}

/**
 * Connection options rather than a shared client, so BullMQ owns each connection and closes it
 * cleanly with its queue or worker.
 */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || 6379),
    username: decodeURIComponent(parsed.username) || undefined,
    password: decodeURIComponent(parsed.password) || undefined,
    db: Number(parsed.pathname.slice(1) || 0),
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
  };
}
