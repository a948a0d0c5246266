import { freePort, launch, launchWeb, entryPoint, type LaunchedProcess } from '../../kit/processes.js';
import { redisNamespace } from '../../kit/redis.js';
import { createTestCertificate } from './tls.js';

export { freePort };
export { sleep, waitUntil } from '../../kit/waiting.js';

export type ServiceProcess = LaunchedProcess;

/** What a test file started and has not stopped yet, for stopAllProcesses. */
const running = new Set<ServiceProcess>();

/** The environment every service a test starts has unless the test says otherwise: trusts the test certificate, logs at info. */
const testEnv = (env: Record<string, string>) => ({ NODE_EXTRA_CA_CERTS: createTestCertificate().certPath, LOG_LEVEL: 'info', ...env });

const track = <T extends ServiceProcess>(service: T): T => {
  running.add(service);
  void service.exited.then(() => running.delete(service));
  return service;
};

/** Starts one of the built entry points (dist/src/main/*.js) as a real process. */
export function startProcess(entry: 'web' | 'worker', env: Record<string, string>): ServiceProcess {
  return track(launch(entryPoint(entry), testEnv(env), { label: entry }));
}

/** Kills whatever a test file left running (afterAll). */
export async function stopAllProcesses() {
  await Promise.all([...running].map((service) => service.stop('SIGKILL')));
}

/** Starts the web process on a free port and waits until it answers. */
export async function startWeb(env: Record<string, string>) {
  return track(await launchWeb(testEnv(env)));
}

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
  return redisNamespace(url, 'contact-hooks-test');
}
