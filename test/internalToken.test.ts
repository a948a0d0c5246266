import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchWeb, waitForOutput, type LaunchedProcess } from '../kit/processes.js';
import { createPostgresDatabase, engines } from './support/databases.js';

/**
 * The embedded default without INTERNAL_API_TOKEN: the server makes a token, keeps it in
 * DATA_DIR readable by its user only, and the first-party API stays closed to anyone without it.
 * With DATABASE_URL nothing is made.
 */

const dirs: string[] = [];
const started: LaunchedProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((service) => service.stop('SIGKILL')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-token-'));
  dirs.push(dir);
  return join(dir, 'data');
};

async function startWeb(env: Record<string, string>) {
  const web = await launchWeb({ LOG_LEVEL: 'info', ...env });
  started.push(web);
  return web;
}

const get = (url: string, authorization?: string) => fetch(url, { headers: authorization ? { authorization } : {} });
const keysUrl = (web: { url: string }) => `${web.url}/internal/v1/accounts/acme/keys`;
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('the token an embedded server makes for itself', () => {
  it('is stored in DATA_DIR with mode 0600, opens the first-party API, and nothing else does (401)', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR });
    const path = join(DATA_DIR, 'internal-api-token');
    expect(modeOf(path)).toBe(0o600);
    const token = readFileSync(path, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Log lines are buffered up to 100 ms (src/main/lifecycle.ts): the path may follow /healthz.
    await waitForOutput(web, path, 5_000);
    expect(web.output()).not.toContain(token);

    for (const authorization of [undefined, 'Bearer not-the-token-not-the-token', `Basic ${Buffer.from(`ops:${token}`).toString('base64')}`]) {
      const refused = await get(keysUrl(web), authorization);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toStrictEqual({ error: 'unauthorized' });
    }
    expect((await get(`${web.url}/metrics`)).status).toBe(401);
    expect((await get(`${web.url}/internal/v1/openapi.json`)).status).toBe(401);
    const listed = await get(keysUrl(web), `Bearer ${token}`);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toStrictEqual({ keys: [] });
    expect((await get(`${web.url}/metrics`, `Bearer ${token}`)).status).toBe(200);

    // A restart keeps it: Prometheus configs and browser logins stay valid.
    expect(await web.stop('SIGTERM')).toBe(0);
    const again = await startWeb({ DATA_DIR });
    expect(readFileSync(path, 'utf8').trim()).toBe(token);
    expect((await get(keysUrl(again), `Bearer ${token}`)).status).toBe(200);
    expect(await again.stop('SIGTERM')).toBe(0);
  });

  it('a stored token file left readable by others is made 0600 again at start', async () => {
    const DATA_DIR = dataDir();
    mkdirSync(DATA_DIR, { recursive: true });
    const path = join(DATA_DIR, 'internal-api-token');
    writeFileSync(path, 'a-token-someone-copied-in-0123456789\n');
    chmodSync(path, 0o644);
    const web = await startWeb({ DATA_DIR });
    expect(modeOf(path)).toBe(0o600);
    expect((await get(keysUrl(web), 'Bearer a-token-someone-copied-in-0123456789')).status).toBe(200);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('is not made when INTERNAL_API_TOKEN is given: that one is the only token', async () => {
    const DATA_DIR = dataDir();
    const web = await startWeb({ DATA_DIR, INTERNAL_API_TOKEN: 'the-operators-own-token-0123456789' });
    expect(existsSync(join(DATA_DIR, 'internal-api-token'))).toBe(false);
    expect((await get(keysUrl(web), 'Bearer the-operators-own-token-0123456789')).status).toBe(200);
    expect((await get(keysUrl(web))).status).toBe(401);
    expect(await web.stop('SIGTERM')).toBe(0);
  });
});

describe.runIf(engines().includes('postgres'))('with DATABASE_URL', () => {
  it('nothing is made: without INTERNAL_API_TOKEN the first-party API is off (404), as before', async () => {
    const database = await createPostgresDatabase();
    try {
      const DATA_DIR = dataDir();
      const web = await startWeb({ DATA_DIR, DATABASE_URL: database.url });
      expect(existsSync(join(DATA_DIR, 'internal-api-token'))).toBe(false);
      expect((await get(keysUrl(web))).status).toBe(404);
      expect((await get(`${web.url}/metrics`)).status).toBe(404);
      expect(await web.stop('SIGTERM')).toBe(0);
    } finally {
      await database.drop();
    }
  });
});
