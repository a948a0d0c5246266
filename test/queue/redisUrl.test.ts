import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/queue/redisConnection.js';
import { withPostgresAndRedis } from '../support/processes.js';

/**
 * REDIS_URL as ioredis reads it: the database in the path, credentials (percent-encoded), an IPv6
 * host in brackets, and `rediss://` as TLS.
 */
describe('REDIS_URL', () => {
  it('reads host, port, credentials, database and TLS from the URL', () => {
    const client = connectRedis({ url: 'rediss://user:p%40ss@[::1]:6390/2' }, 'fails-fast') as Redis;
    const refused: unknown[] = [];
    client.on('error', (error) => refused.push(error)); // nothing listens on that port: this test reads options only
    try {
      expect(client.options).toMatchObject({ host: '::1', port: 6390, username: 'user', password: 'p@ss', db: 2 });
      expect(client.options.tls).toBeTruthy();
    } finally {
      client.disconnect();
    }
  });

  it.runIf(withPostgresAndRedis)('selects the database the path names on a real server', async () => {
    const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    url.pathname = '/3';
    const client = connectRedis({ url: url.toString() }, 'waits') as Redis;
    try {
      expect(String(await client.call('CLIENT', 'INFO'))).toMatch(/ db=3 /);
    } finally {
      client.disconnect();
    }
  });
});
