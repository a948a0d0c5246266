import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, fetch } from 'undici';
import { freePort, waitUntil } from '../support/processes.js';
import { createTestCertificate } from '../support/tls.js';

/** The community node package, built to dist/ by `npm run n8n:build`. */
export const PACKAGE_DIR = resolve(import.meta.dirname, '../../integrations/n8n');
const BUILT = join(PACKAGE_DIR, 'dist');
/** The pinned n8n and the Node it needs, installed in runtime/ by `npm run n8n:runtime`. */
const RUNTIME_DIR = resolve(import.meta.dirname, 'runtime');
const NODE = join(RUNTIME_DIR, 'node_modules/node/bin/node');
const N8N = join(RUNTIME_DIR, 'node_modules/n8n/bin/n8n');

/** Why n8n cannot be started here (nothing installed, or the package not built), or undefined when it can. */
export function n8nMissing(): string | undefined {
  if (!existsSync(NODE) || !existsSync(N8N)) return `n8n is not installed in ${RUNTIME_DIR} (run \`npm run n8n:runtime\`)`;
  if (!existsSync(join(BUILT, 'nodes/ContactHooksTrigger/ContactHooksTrigger.node.js'))) return `the n8n nodes are not built (run \`npm run n8n:build\`)`;
  return undefined;
}

/** The owner the test creates; n8n asks for a password of 8 characters or more, with a digit and a capital. */
const OWNER = { email: 'owner@example.com', firstName: 'Test', lastName: 'Owner', password: 'Contact-hooks-1' };
/** n8n binds a browser session to this header. */
const BROWSER_ID = 'contact-hooks-test';
const API_KEY_SCOPES = [
  'credential:create',
  'credential:update',
  'workflow:create',
  'workflow:read',
  'workflow:update',
  'workflow:delete',
  'workflow:list',
  'workflow:activate',
  'workflow:deactivate',
  'execution:list',
  'execution:read',
];

/** Modules of n8n that call its own services on the internet or that no test here uses. */
const DISABLED_MODULES = [
  'mcp-registry',
  'community-packages',
  'instance-ai',
  'agents',
  'workflow-builder',
  'chat-hub',
  'mcp',
  'quick-connect',
  'promotions',
  'instance-reporting',
  'insights',
];

/**
 * A real n8n: the pinned version, on the Node its package pins, served over HTTPS with the test
 * certificate (contact-hooks only POSTs to https targets, and trusts that certificate), on SQLite
 * in a temporary user folder, with the built nodes of integrations/n8n loaded as custom nodes and
 * everything that would reach the internet turned off. It is started in a process group of its
 * own, so `stop` ends n8n and the task runner it starts. Once it answers, an owner and an API key
 * are created through its REST endpoints; `api` calls its public API with that key.
 */
export async function startN8n() {
  const certificate = createTestCertificate();
  const userFolder = mkdtempSync(join(tmpdir(), 'contact-hooks-n8n-'));
  const logPath = join(userFolder, 'n8n.log');
  const [port, brokerPort] = [await freePort(), await freePort()];
  const url = `https://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? '',
    N8N_USER_FOLDER: userFolder,
    DB_TYPE: 'sqlite',
    N8N_ENCRYPTION_KEY: 'contact-hooks-test-encryption-key',
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    N8N_PORT: String(port),
    N8N_PROTOCOL: 'https',
    N8N_SSL_KEY: certificate.keyPath,
    N8N_SSL_CERT: certificate.certPath,
    N8N_WEBHOOK_URL: `${url}/`,
    N8N_CUSTOM_EXTENSIONS: BUILT,
    N8N_RUNNERS_BROKER_PORT: String(brokerPort),
    GENERIC_TIMEZONE: 'UTC',
    // n8n 2 (de)activates a workflow through an outbox it polls every 15 s; a second keeps the test short.
    N8N_WORKFLOW_PUBLICATION_OUTBOX_POLL_INTERVAL_MS: '1000',
    // Nothing leaves the machine: no telemetry, version checks, templates, banners, license
    // renewal or community package look-ups.
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_HIRING_BANNER_ENABLED: 'false',
    N8N_DYNAMIC_BANNERS_ENABLED: 'false',
    N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
    N8N_COMMUNITY_PACKAGES_ENABLED: 'false',
    N8N_AI_ENABLED: 'false',
    N8N_DISABLED_MODULES: DISABLED_MODULES.join(','),
    N8N_LOG_LEVEL: 'info',
  };
  const log = openSync(logPath, 'a');
  const child = spawn(NODE, [N8N, 'start'], { env, stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const output = () => (existsSync(logPath) ? readFileSync(logPath, 'utf8') : '');

  const dispatcher = new Agent({ connect: { ca: certificate.cert } });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(url + path, {
      method,
      dispatcher,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    // n8n answers JSON, except for some errors of its web server.
    const answer = text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text;
    return { status: response.status, body: answer, headers: response.headers };
  };

  const stop = async () => {
    if (alive() && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => alive() && child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    await dispatcher.close();
    rmSync(userFolder, { recursive: true, force: true });
  };

  let apiKey: string;
  let session: Record<string, string>;
  try {
    // Readiness comes with the database; the editor line comes once nodes and webhooks are loaded too.
    const ready = async () => output().includes('Editor is now accessible') && (await call('GET', '/healthz/readiness').catch(() => undefined))?.status === 200;
    await waitUntil(
      async () => !alive() || (await ready()),
      120_000,
      () => `n8n did not become ready:\n${output().slice(-4000)}`,
    );
    if (!alive()) throw new Error(`n8n exited while starting:\n${output().slice(-4000)}`);

    const owner = await call('POST', '/rest/owner/setup', OWNER, { 'browser-id': BROWSER_ID });
    if (owner.status !== 200) throw new Error(`n8n owner setup failed: ${owner.status} ${JSON.stringify(owner.body)}`);
    const cookie = owner.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    session = { cookie, 'browser-id': BROWSER_ID };
    const key = await call('POST', '/rest/api-keys', { label: 'contact-hooks test', scopes: API_KEY_SCOPES, expiresAt: null }, session);
    if (key.status !== 200) throw new Error(`n8n API key not created: ${key.status} ${JSON.stringify(key.body)}`);
    apiKey = key.body.data.rawApiKey as string;
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    output,
    stop,
    /** One call to n8n's public API (`/api/v1`) with the owner's key. */
    api: (method: string, path: string, body?: unknown) => call(method, `/api/v1${path}`, body, { 'x-n8n-api-key': apiKey }),
    /** One call to the REST endpoints n8n's editor uses (`/rest`), in the owner's session. */
    rest: (method: string, path: string, body?: unknown) => call(method, `/rest${path}`, body, session),
    /** A request as an outside caller sends it (a webhook's POST), with no n8n credentials. */
    request: (method: string, path: string, body: string, headers: Record<string, string>) =>
      fetch(url + path, { method, dispatcher, headers, body }).then(async (response) => ({ status: response.status, body: await response.text() })),
  };
}

export type N8n = Awaited<ReturnType<typeof startN8n>>;
