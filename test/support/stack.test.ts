import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freePort } from './processes.js';
import { withRedisCluster } from './redisShapes.js';
import { startStack } from './stack.js';

/** The redis-server processes this test process started and has not stopped. */
function ownRedisServers(): string[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), 'redis-server'], { encoding: 'utf8' })
      .trim()
      .split('\n');
  } catch (error) {
    if ((error as { status?: number }).status === 1) return []; // pgrep: nothing matched
    throw error;
  }
}

/**
 * A test file whose beforeAll threw has no stack for its afterAll to stop, so a stack that fails
 * to start stops what it had started itself: here a Redis Cluster of its own, started before
 * the database that cannot be reached.
 */
describe.runIf(withRedisCluster)('a stack that fails to start', () => {
  it('stops the Redis Cluster it had started, and throws why it failed', async () => {
    const adminUrl = process.env.DATABASE_URL;
    process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    try {
      await expect(startStack({ mode: 'workers', redis: 'cluster' })).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      process.env.DATABASE_URL = adminUrl;
    }
    expect(ownRedisServers()).toStrictEqual([]);
  });
});
