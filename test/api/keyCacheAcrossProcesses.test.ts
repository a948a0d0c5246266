import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_TTL_MS } from '../../src/services/keyCache.js';
import { INTERNAL_TOKEN } from '../support/app.js';
import { client } from '../support/client.js';
import { createPostgresDatabase } from '../support/databases.js';
import { redisForTest, sleep, startWeb, stopAllProcesses, withPostgresAndRedis } from '../support/processes.js';

/**
 * Web processes keep the keys they saw for a second (src/services/keyCache.ts). A key revoked
 * or rotated through one web process is refused by that one at once, and by every other within
 * KEY_CACHE_TTL_MS (1 s), however busy the key was there.
 */
describe.runIf(withPostgresAndRedis)('a revoked or rotated key across two web processes', () => {
  let cleanup: () => Promise<void>;
  let a: ReturnType<typeof client>;
  let b: ReturnType<typeof client>;

  beforeAll(async () => {
    const database = await createPostgresDatabase();
    const redis = redisForTest();
    const env = { DATABASE_URL: database.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, INTERNAL_API_TOKEN: INTERNAL_TOKEN, LOG_LEVEL: 'warn' };
    a = client((await startWeb(env)).url);
    b = client((await startWeb(env)).url);
    cleanup = async () => {
      await stopAllProcesses();
      await redis.cleanup();
      await database.drop();
    };
  });
  afterAll(async () => {
    await cleanup?.();
  });

  /** Uses `key` on both processes, so both have it cached; both answer 200. */
  async function warm(key: string) {
    for (let i = 0; i < 5; i++) {
      expect((await a.api(key)('GET', '/me')).status).toBe(200);
      expect((await b.api(key)('GET', '/me')).status).toBe(200);
    }
  }

  it('refuses a revoked key at once where it was revoked, and everywhere within a second', async () => {
    const key = await a.newKey('cache-revoke');
    const { body } = await a.api(key)('GET', '/me');
    await warm(key);
    expect((await a.internal('DELETE', `/keys/${body.key.id}`)).status).toBe(200);
    expect((await a.api(key)('GET', '/me')).status).toBe(401);
    await sleep(KEY_CACHE_TTL_MS);
    expect((await b.api(key)('GET', '/me')).status).toBe(401);
    expect((await b.api(key)('POST', '/contacts', { phone: '+14155550100' })).status).toBe(401);
  });

  it('refuses the old secret of a rotated key everywhere within a second, and takes the new one at once', async () => {
    const key = await a.newKey('cache-rotate');
    const { body } = await a.api(key)('GET', '/me');
    await warm(key);
    const rotated = await a.internal('POST', `/keys/${body.key.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect((await a.api(key)('GET', '/me')).status).toBe(401);
    expect((await b.api(rotated.body.key)('GET', '/me')).status).toBe(200);
    await sleep(KEY_CACHE_TTL_MS);
    expect((await b.api(key)('GET', '/me')).status).toBe(401);
  });
});
