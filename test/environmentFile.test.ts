import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, launch, type LaunchedProcess } from '../kit/processes.js';
import { waitUntil } from '../kit/waiting.js';

/**
 * `.env` in the working directory, read at start by the service's processes and by the CLI
 * (Node's process.loadEnvFile): a variable already in the environment wins over the file.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
const started: LaunchedProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((service) => service.stop('SIGKILL')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A working directory holding `.env` with these lines. */
function directoryWithEnvFile(lines: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-env-'));
  dirs.push(dir);
  writeFileSync(join(dir, '.env'), `${lines.join('\n')}\n`);
  return dir;
}

const answers = async (port: number) => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true;

/** The web process started in `cwd`, whose own .env then applies. */
function startWebIn(cwd: string, env: Record<string, string>) {
  const web = launch(join(root, 'dist/src/main/web.js'), { LOG_LEVEL: 'warn', ...env }, { cwd, label: 'web' });
  started.push(web);
  return web;
}

async function cli(cwd: string, args: string[], env: Record<string, string> = {}) {
  const run = launch(join(root, 'bin/contact-hooks.js'), env, { cwd, args, endsByItself: true });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('.env', () => {
  it('sets what the environment does not: the web process listens on the port .env names', async () => {
    const port = await freePort();
    const cwd = directoryWithEnvFile([`PORT=${port}        # a comment after the value`, 'HOST=127.0.0.1']);
    const web = startWebIn(cwd, {});
    await waitUntil(
      async () => !web.alive() || (await answers(port)),
      30_000,
      () => web.output(),
    );
    expect(web.alive()).toBe(true);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('cannot lift the SSRF guard in production: the web process refuses to start and names the setting', async () => {
    const cwd = directoryWithEnvFile(['DELIVERY_ALLOW_PRIVATE_NETWORKS=true', `PORT=${await freePort()}`, 'HOST=127.0.0.1']);
    const web = launch(join(root, 'dist/src/main/web.js'), { NODE_ENV: 'production' }, { cwd, endsByItself: true });
    expect(await web.exited).toBe(1);
    expect(web.stderr()).toMatch(/DELIVERY_ALLOW_PRIVATE_NETWORKS: refused when NODE_ENV=production/);
  });

  it('loses to a variable already in the environment', async () => {
    const [filePort, envPort] = [await freePort(), await freePort()];
    const cwd = directoryWithEnvFile([`PORT=${filePort}`, 'HOST=127.0.0.1']);
    const web = startWebIn(cwd, { PORT: String(envPort) });
    await waitUntil(
      async () => !web.alive() || (await answers(envPort)),
      30_000,
      () => web.output(),
    );
    expect(web.alive()).toBe(true);
    expect(await answers(filePort)).toBe(false);
    expect(await web.stop('SIGTERM')).toBe(0);
  });

  it('is read by the CLI too, with the same precedence', async () => {
    const cwd = directoryWithEnvFile(['DEFAULT_COUNTRY=usa', `DATA_DIR=${join(tmpdir(), 'contact-hooks-env-unused')}`]);
    const refused = await cli(cwd, ['keys', 'list', '--account', 'acme']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/DEFAULT_COUNTRY/);

    const dataDir = join(cwd, 'data');
    const listed = await cli(cwd, ['keys', 'list', '--account', 'acme'], { DEFAULT_COUNTRY: 'GB', DATA_DIR: dataDir });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/No keys for account acme/);
  });
});
