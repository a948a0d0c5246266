import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort } from '../../bench/support/services.js';
import { createTestCertificate } from './tls.js';

/** A port free right now on 127.0.0.1 (shared with the benchmarks). */
export { freePort };

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  output: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | NodeJS.Signals>;
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

const running = new Set<ServiceProcess>();

/** Starts one of the built entry points (dist/src/main/*.js) as a real process. */
export function startProcess(entry: 'web' | 'worker', env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [`dist/src/main/${entry}.js`], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_EXTRA_CA_CERTS: createTestCertificate().certPath,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  let stopping = false;
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.on('exit', (code, signal) => {
      // A service that dies on its own is a finding: show why, whatever the test then reports.
      if (!stopping && code !== 0) console.error(`[${entry} ${child.pid}] exited with ${code ?? signal}:\n${output.slice(-4000)}`);
      resolve(code ?? signal!);
    }),
  );
  const service: ServiceProcess = {
    child,
    pid: child.pid!,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const result = await exited;
      running.delete(service);
      return result;
    },
  };
  running.add(service);
  void exited.then(() => running.delete(service));
  return service;
}

/** Kills whatever a test file left running (afterAll). */
export async function stopAllProcesses() {
  await Promise.all([...running].map((service) => service.stop('SIGKILL')));
}

/** Starts the web process on a free port and waits until it answers. */
export async function startWeb(env: Record<string, string>) {
  const port = await freePort();
  const web = startProcess('web', { HOST: '127.0.0.1', PORT: String(port), ...env });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok === true, 30_000, () => web.output());
  return { ...web, url };
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, describe?: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${describe ? `\n${describe()}` : ''}`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether suites that need PostgreSQL and Redis run: always under CI (where a missing
 * DATABASE_URL or REDIS_URL then fails them), and wherever both are set. A developer without
 * them still gets every PGlite and embedded-mode suite.
 */
export const withPostgresAndRedis = Boolean(process.env.CI || (process.env.DATABASE_URL && process.env.REDIS_URL));

/**
 * The machine's Redis under CI; a unique key prefix per test file keeps runs apart, and
 * `cleanup` deletes the keys it made.
 */
export function redisForTest() {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL must be set for the BullMQ suites');
  const prefix = `contact-hooks-test-${randomBytes(5).toString('hex')}`;
  return {
    url,
    prefix,
    async cleanup() {
      const redis = new Redis(url);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}
