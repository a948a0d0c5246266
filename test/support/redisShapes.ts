import { spawnSync } from 'node:child_process';
import { describe } from 'vitest';
import { clusterNamespace, type RedisNamespace } from '../../kit/redis.js';
import { startRedisCluster, type RedisCluster } from '../../kit/redisCluster.js';
import { redisForTest, withPostgresAndRedis } from './processes.js';

/** The Redis a production-shape suite runs on: the machine's one server, or a Redis Cluster of its own. */
export type RedisShape = 'single' | 'cluster';

const hasRedisServer = () => spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;

/**
 * Whether the cluster suites run: always under CI (where a missing redis-server or redis-cli
 * then fails them, never skips), and wherever PostgreSQL and Redis are and redis-server is on PATH.
 */
export const withRedisCluster = withPostgresAndRedis && Boolean(process.env.CI || hasRedisServer());

/** The shapes a suite that covers both runs in (none without PostgreSQL and Redis). */
const redisShapes = (): RedisShape[] => [...(withPostgresAndRedis ? (['single'] as const) : []), ...(withRedisCluster ? (['cluster'] as const) : [])];

/**
 * Declares `body` once per Redis shape (`name` takes the shape through `%s`). Without PostgreSQL
 * and Redis it declares the single-server suite skipped, so the file reports a skip, as the
 * README promises, instead of vitest's "No test suite found".
 */
export const describeEachRedisShape = (name: string, body: (shape: RedisShape) => void) =>
  describe.runIf(withPostgresAndRedis).each(withPostgresAndRedis ? redisShapes() : (['single'] as const))(name, body);

export type TestRedis = RedisNamespace & {
  shape: RedisShape;
  /** The cluster itself (cluster shape only), to take it away and bring it back. */
  cluster?: RedisCluster;
  /** Deletes the namespace's keys, or stops the cluster. */
  stop(): Promise<void>;
};

/**
 * A namespace of its own on the machine's Redis, or a 3-master cluster started for the caller
 * (kit/redisCluster.ts), stopped by `stop`.
 */
export async function redisFor(shape: RedisShape): Promise<TestRedis> {
  if (shape === 'single') {
    const redis = redisForTest();
    return { ...redis, shape, stop: async () => void (await redis.cleanup()) };
  }
  const cluster = await startRedisCluster();
  return { ...clusterNamespace(cluster.nodes, 'contact-hooks-test'), shape, cluster, stop: cluster.stop };
}
