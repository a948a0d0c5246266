import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redisTargetOf } from '../src/config.js';

/** Settings whose defaults or checks are rules of their own. */
describe('configuration', () => {
  it('gives SHUTDOWN_GRACE_MS a default above the delivery timeout, so a deploy does not cut POSTs in flight', () => {
    expect(loadConfig({}).SHUTDOWN_GRACE_MS).toBe(15_000);
    expect(loadConfig({ DELIVERY_TIMEOUT_MS: '20000' }).SHUTDOWN_GRACE_MS).toBe(25_000);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '3000' }).SHUTDOWN_GRACE_MS).toBe(3_000);
  });

  it('keeps 30 days by default and takes fractions of a day for RETENTION_DAYS', () => {
    expect(loadConfig({}).RETENTION_DAYS).toBe(30);
    expect(loadConfig({ RETENTION_DAYS: '0.5' }).RETENTION_DAYS).toBe(0.5);
    for (const bad of ['0', '-1', 'forever']) expect(() => loadConfig({ RETENTION_DAYS: bad })).toThrow(/RETENTION_DAYS/);
  });

  it('auto-disables after 5 days and 20 failures by default, and reads HOOK_DISABLE_AFTER as a duration', () => {
    expect([loadConfig({}).HOOK_DISABLE_AFTER, loadConfig({}).HOOK_DISABLE_MIN_FAILURES]).toStrictEqual([5 * 86_400_000, 20]);
    expect(loadConfig({ HOOK_DISABLE_AFTER: '2s' }).HOOK_DISABLE_AFTER).toBe(2_000);
    expect(loadConfig({ HOOK_DISABLE_AFTER: '5d' }).HOOK_DISABLE_AFTER).toBe(5 * 86_400_000);
    expect(loadConfig({ HOOK_DISABLE_AFTER: '90m' }).HOOK_DISABLE_AFTER).toBe(90 * 60_000);
    for (const bad of ['0s', 'soon', '-1d']) expect(() => loadConfig({ HOOK_DISABLE_AFTER: bad })).toThrow(/HOOK_DISABLE_AFTER/);
    for (const bad of ['0', '2.5', 'many']) expect(() => loadConfig({ HOOK_DISABLE_MIN_FAILURES: bad })).toThrow(/HOOK_DISABLE_MIN_FAILURES/);
  });

  it('defaults REQUEST_TIMEOUT_MS to 30 s and METRICS_HOST to loopback; Bull Board is read-only unless asked', () => {
    const config = loadConfig({});
    expect([config.REQUEST_TIMEOUT_MS, config.METRICS_HOST, config.BULL_BOARD_WRITABLE]).toStrictEqual([30_000, '127.0.0.1', false]);
    expect(loadConfig({ BULL_BOARD_WRITABLE: 'true' }).BULL_BOARD_WRITABLE).toBe(true);
    expect(() => loadConfig({ BULL_BOARD_WRITABLE: 'yes' })).toThrow(ConfigError);
  });

  it('lifts the SSRF guard only outside production: NODE_ENV=production refuses DELIVERY_ALLOW_PRIVATE_NETWORKS, naming it', () => {
    expect(loadConfig({ DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' }).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' }).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false' }).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(false);
    expect(() => loadConfig({ NODE_ENV: 'production', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' })).toThrow(
      /DELIVERY_ALLOW_PRIVATE_NETWORKS: refused when NODE_ENV=production/,
    );
  });

  it('reads REDIS_CLUSTER_NODES as host:port pairs, uses the cluster over REDIS_URL, and refuses anything else naming it', () => {
    const cluster = loadConfig({ REDIS_CLUSTER_NODES: ' redis-a:7000, 10.0.0.2:7001 ,', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(redisTargetOf(cluster)).toStrictEqual({
      clusterNodes: [
        { host: 'redis-a', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
    });
    expect(redisTargetOf(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }))).toStrictEqual({ url: 'redis://127.0.0.1:6379' });
    expect(redisTargetOf(loadConfig({}))).toBeUndefined();
    for (const bad of ['redis-a', 'redis://redis-a:7000', 'redis-a:port', ',']) {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: bad })).toThrow(/REDIS_CLUSTER_NODES/);
    }
  });

  it('refuses braces in QUEUE_PREFIX: the service makes it the hash tag of BullMQ keys itself', () => {
    expect(loadConfig({}).QUEUE_PREFIX).toBe('contact-hooks');
    for (const bad of ['{contact-hooks}', 'a{b', 'a}b']) expect(() => loadConfig({ QUEUE_PREFIX: bad })).toThrow(/QUEUE_PREFIX: must not contain/);
  });
});
