import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../kit/processes.js';
import { sleep, waitUntil } from '../kit/waiting.js';
import { createPostgresDatabase } from './support/databases.js';
import { redisForTest, withPostgresAndRedis } from './support/processes.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { createTestCertificate } from './support/tls.js';

/**
 * The processes exactly as docker-compose.yml and the Procfile start them, and a deploy's SIGTERM
 * sent to the process the platform signals: Compose signals the command it started (exec form,
 * so that is PID 1 of the container; when PID 1 exits, the kernel SIGKILLs whatever is left), a
 * Procfile runner starts each line with `sh -c` and signals that shell's process. Each must
 * drain (a POST in flight finishes and its outcome is recorded), exit 0, and leave no process
 * behind in its process group. No Docker engine runs here, so the command lines themselves are
 * run, from the repository root as the image's /app (the same dist/ and node_modules/).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const certificate = createTestCertificate();

/** Compose's `command:` of a service: a list in exec form, which the file writes as a JSON array. */
function composeCommand(service: string): string[] {
  const lines = readFileSync(join(root, 'docker-compose.yml'), 'utf8').split('\n');
  const start = lines.indexOf(`  ${service}:`);
  if (start < 0) throw new Error(`docker-compose.yml has no service ${service}`);
  for (const line of lines.slice(start + 1)) {
    if (line !== '' && !line.startsWith('    ')) break;
    const command = /^ {4}command: (.+)$/.exec(line)?.[1];
    if (command === undefined) continue;
    const argv: unknown = JSON.parse(command);
    if (!Array.isArray(argv) || !argv.every((part) => typeof part === 'string')) throw new Error(`${service}'s command is not in exec form`);
    return argv;
  }
  throw new Error(`docker-compose.yml's ${service} has no command`);
}

/** A Procfile line's command. */
function procfileCommand(name: string): string {
  const command = new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(readFileSync(join(root, 'Procfile'), 'utf8'))?.[1];
  if (command === undefined) throw new Error(`the Procfile has no ${name}`);
  return command;
}

interface PlatformProcess {
  pid: number;
  exited: Promise<number | NodeJS.Signals>;
  output(): string;
}

const groups: number[] = [];
const dirs: string[] = [];

/**
 * A process group of its own, as a container or a Procfile runner gives each process, with
 * `node` on PATH being the Node that runs this suite.
 */
function startAsThePlatformDoes(file: string, args: string[], env: Record<string, string>): PlatformProcess {
  const child = spawn(file, args, {
    cwd: root,
    env: { PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, NODE_EXTRA_CA_CERTS: certificate.certPath, LOG_LEVEL: 'info', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  groups.push(child.pid!);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal!)));
  return { pid: child.pid!, exited, output: () => output };
}

const PLATFORMS = {
  'docker-compose.yml': (service: 'migrate' | 'web' | 'worker', env: Record<string, string>) => {
    const [file, ...args] = composeCommand(service);
    return startAsThePlatformDoes(file!, args, env);
  },
  Procfile: (service: 'migrate' | 'web' | 'worker', env: Record<string, string>) =>
    startAsThePlatformDoes('/bin/sh', ['-c', procfileCommand(service === 'migrate' ? 'release' : service)], env),
};
type Platform = keyof typeof PLATFORMS;

/** Whether any process of the group is still there (signal 0 checks without sending). */
function groupAlive(pgid: number) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM to the process the platform signals; then its exit status, and whether its group is empty. */
async function deploy(service: PlatformProcess) {
  process.kill(service.pid, 'SIGTERM');
  const code = await service.exited;
  // Anything left would be SIGKILLed with the container, or orphaned by the runner.
  await sleep(200);
  return { code, leftBehind: groupAlive(service.pid) };
}

afterAll(() => {
  for (const pgid of groups) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function startWeb(platform: Platform, env: Record<string, string>) {
  const port = await freePort();
  const web = PLATFORMS[platform]('web', { ...env, HOST: '127.0.0.1', PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const answers = async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok === true;
  await waitUntil(answers, 30_000, () => web.output());
  return { ...web, url };
}

const TOKEN = 'deploy-commands-internal-token-0123';
const json = async (url: string, method: string, authorization: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const newKey = async (web: { url: string }) => (await json(`${web.url}/internal/v1/accounts/acme/keys`, 'POST', `Bearer ${TOKEN}`, {})).body.key as string;

/** Subscribes a path of the receiver that holds each POST for `holdMs`, then fires one new_contact. */
async function deliveryInFlight(web: { url: string }, receiver: Receiver, path: string) {
  const key = await newKey(web);
  const subscribed = await json(`${web.url}/api/v1/hooks`, 'POST', `Bearer ${key}`, { event: 'new_contact', target_url: `${receiver.url}${path}` });
  expect(subscribed.status).toBe(201);
  expect((await json(`${web.url}/api/v1/contacts`, 'POST', `Bearer ${key}`, { phone: '+1 415 555 0150' })).status).toBe(200);
  await waitUntil(() => receiver.requests.some((received) => received.path === path), 15_000);
  return { key, hookId: subscribed.body.id as string };
}

/**
 * An upsert whose body is still arriving when the deploy starts: half of it, then SIGTERM from
 * `signal`, then the rest. Resolves with the status it was answered.
 */
async function upsertAcrossSignal(web: { url: string }, key: string, phone: string, signal: () => void) {
  const body = JSON.stringify({ phone, name: 'In Flight' });
  const { hostname, port } = new URL(web.url);
  return new Promise<number>((resolve, reject) => {
    const post = request(
      {
        hostname,
        port,
        path: '/api/v1/contacts',
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode!);
      },
    );
    post.on('error', reject);
    post.write(body.slice(0, 10));
    void sleep(300).then(async () => {
      signal();
      await sleep(300);
      post.end(body.slice(10));
    });
  });
}

describe.runIf(withPostgresAndRedis).each(['docker-compose.yml', 'Procfile'] as const)('%s on PostgreSQL and Redis: a deploy drains', (platform) => {
  it('migrate runs as written; a worker finishes the POST in flight and records it; web answers the request in flight; nothing is left behind', async () => {
    const database = await createPostgresDatabase();
    const redis = redisForTest();
    const receiver = await startReceiver({ respond: () => ({ delayMs: 1_500 }) });
    try {
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.prefix,
        INTERNAL_API_TOKEN: TOKEN,
        DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      };
      const migrate = PLATFORMS[platform]('migrate', env);
      expect(await migrate.exited).toBe(0);
      expect(migrate.output()).toMatch(/migrations applied to the PostgreSQL database at DATABASE_URL/);

      const web = await startWeb(platform, env);
      const worker = PLATFORMS[platform]('worker', env);
      await waitUntil(
        () => worker.output().includes('worker started'),
        30_000,
        () => worker.output(),
      );
      const { key } = await deliveryInFlight(web, receiver, '/held');

      const stopped = await deploy(worker);
      expect(stopped).toStrictEqual({ code: 0, leftBehind: false });
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      try {
        const { rows } = await db.query('SELECT status, response_status FROM deliveries');
        expect(rows).toStrictEqual([{ status: 'delivered', response_status: 200 }]);

        let webStopped: Promise<{ code: number | NodeJS.Signals; leftBehind: boolean }> | undefined;
        const status = await upsertAcrossSignal(web, key, '+1 415 555 0160', () => {
          webStopped = deploy(web);
        });
        expect(status).toBe(200);
        expect(await webStopped).toStrictEqual({ code: 0, leftBehind: false });
        expect((await db.query("SELECT name FROM contacts WHERE phone = '+14155550160'")).rows).toStrictEqual([{ name: 'In Flight' }]);
      } finally {
        await db.end();
      }
    } finally {
      await receiver.close();
      await redis.cleanup();
      await database.drop();
    }
  }, 90_000);
});

describe('Procfile run locally on the embedded default (no DATABASE_URL, no REDIS_URL): a stop drains', () => {
  it('web finishes the delivery in flight and records it, exits 0 and leaves nothing behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-procfile-'));
    dirs.push(dir);
    const receiver = await startReceiver({ respond: () => ({ delayMs: 1_500 }) });
    try {
      const env = { DATA_DIR: join(dir, 'data'), INTERNAL_API_TOKEN: TOKEN, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' };
      const web = await startWeb('Procfile', env);
      const { key, hookId } = await deliveryInFlight(web, receiver, '/held');
      expect(await deploy(web)).toStrictEqual({ code: 0, leftBehind: false });
      expect(web.output()).toMatch(/shutting down/);

      // PGlite allows one process: the outcome is read back through the next start.
      const again = await startWeb('Procfile', env);
      const log = await json(`${again.url}/api/v1/hooks/${hookId}/deliveries`, 'GET', `Bearer ${key}`);
      expect(
        (log.body.deliveries as { status: string; response_status: number }[]).map((delivery) => [delivery.status, delivery.response_status]),
      ).toStrictEqual([['delivered', 200]]);
      expect(await deploy(again)).toStrictEqual({ code: 0, leftBehind: false });
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
