import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** Where Redis is: one server, or some nodes of a cluster (src/config.ts reads it from the environment). */
export type RedisTarget = { url: string } | { clusterNodes: Array<{ host: string; port: number }> };

/** Where a process's queues, pacer and rate limit live in Redis: the server or cluster, and the key prefix. */
export interface RedisSettings {
  target: RedisTarget;
  prefix: string;
}

/** A client of either shape; both take the same commands, scripts and subscriptions. */
export type RedisClient = Redis | Cluster;

/**
 * How a connection behaves when Redis is away. `fails-fast`: a command fails at once (the web's
 * request path never waits on Redis). `waits`: commands wait for Redis as long as it takes (a
 * worker's, and what BullMQ requires of a worker's connection). `operator`: ioredis's defaults
 * (Bull Board's pages).
 */
export type RedisRole = 'fails-fast' | 'waits' | 'operator';

const ROLE_OPTIONS: Record<RedisRole, RedisOptions> = {
  'fails-fast': { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  waits: { maxRetriesPerRequest: null },
  operator: {},
};

/**
 * The one place that decides between a single server and a cluster: a client for `role`, with
 * auto-pipelining (calls of one tick share a round trip) and a command timeout when asked.
 */
export function connectRedis(target: RedisTarget, role: RedisRole, extra: { autoPipelining?: boolean; commandTimeoutMs?: number } = {}): RedisClient {
  const options: RedisOptions = { ...ROLE_OPTIONS[role], ...(extra.commandTimeoutMs !== undefined && { commandTimeout: extra.commandTimeoutMs }) };
  const enableAutoPipelining = extra.autoPipelining ?? false;
  if ('clusterNodes' in target) {
    // The cluster's own offline queue is what fails fast (or waits) before the cluster is known;
    // its per-node connections always queue while they connect (ioredis sets that itself).
    return new Cluster(target.clusterNodes, { redisOptions: options, enableOfflineQueue: options.enableOfflineQueue ?? true, enableAutoPipelining });
  }
  // ioredis reads the URL itself: host (IPv6 in brackets too), port, credentials, db, rediss:// as TLS.
  return new Redis(target.url, { ...options, enableAutoPipelining });
}

/** Resolves true once `client` is connected and ready, or false after `withinMs`, whichever comes first. */
export function whenReady(client: RedisClient, withinMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ready: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => settle(true);
    const timer = setTimeout(() => settle(false), withinMs);
    client.once('ready', onReady);
  });
}

/**
 * BullMQ's prefix: QUEUE_PREFIX as a hash tag, so every key of a queue (BullMQ's scripts take
 * several) sits in one slot of a cluster, the same on a single server. The pacer's and the rate
 * limit's keys keep QUEUE_PREFIX bare, so they spread over the cluster by their own tags.
 */
export const bullPrefix = (prefix: string) => `{${prefix}}`;
