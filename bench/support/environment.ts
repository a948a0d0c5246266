import os from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import { fmt } from '../results.js';
import { foreignLoad } from './cpu.js';

/** The machine, PostgreSQL and Redis a run measures on, as the report's header names them. */
export async function describeEnvironment(adminUrl: string, redisUrl: string): Promise<Record<string, string | number>> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const version = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? '?';
    const settings = await client.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'max_connections', 'autovacuum')`,
    );
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const info = await redis.info('server').finally(() => redis.disconnect());
    const cpu = os.cpus();
    return {
      node: process.version,
      cores: cpu.length,
      cpu: cpu[0]?.model ?? '?',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      kernel: os.release(),
      postgres: version,
      postgresSettings: settings.rows.map((row) => `${row.name}=${row.setting}`).join(', '),
      redis: /redis_version:(\S+)/.exec(info)?.[1] ?? '?',
    };
  } finally {
    await client.end();
  }
}

/**
 * Other work on this machine skews every figure: waits (up to `waitMs`) for the CPU that
 * processes other than `ours` use to fall under 10%, and returns the share it last saw.
 */
export async function waitForQuiet(ours: ReadonlyMap<number, string>, waitMs: number, progress: (message: string) => void) {
  const started = performance.now();
  let foreign = await foreignLoad(ours, undefined, 2_000);
  while (foreign > 0.1 && performance.now() - started < waitMs) {
    progress(`other processes use ${fmt(foreign * 100)}% of the CPU; waiting for the machine to go quiet`);
    foreign = await foreignLoad(ours, undefined, 5_000);
  }
  return foreign;
}
