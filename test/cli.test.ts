import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, engines } from './support/databases.js';
import { entryPoint, freePort, launch, launchWeb, type LaunchedProcess } from '../kit/processes.js';
import type { ListedKey } from '../src/cli/keyBackend.js';

/**
 * The `contact-hooks` bin as a real child process, on PGlite in DATA_DIR (alone, and beside a
 * running server) and on the PostgreSQL server.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'cli-test-internal-token-0123456789';
const KEY_FIELDS = ['account_id', 'id', 'key', 'source'];
const LISTED_FIELDS = ['account_id', 'created_at', 'id', 'last_used_at', 'name', 'revoked_at', 'source'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const children = new Set<LaunchedProcess>();
const dirs: string[] = [];

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-cli-'));
  dirs.push(dir);
  return dir;
};

/** Only what a process needs, so the test runner's DATABASE_URL or token never leaks in by accident. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' });

async function stop(service: LaunchedProcess) {
  await service.stop('SIGTERM', { killAfterMs: 15_000 });
  children.delete(service);
}

/** A process that ends by itself (a CLI command, a server that must refuse to start): its exit code, SIGKILL after `timeoutMs`. */
async function finished(command: LaunchedProcess, timeoutMs: number) {
  children.add(command);
  const timer = setTimeout(() => command.alive() && command.child.kill('SIGKILL'), timeoutMs);
  const code = await command.exited;
  clearTimeout(timer);
  children.delete(command);
  return code;
}

interface Run {
  code: number | NodeJS.Signals;
  stdout: string;
  stderr: string;
}

/** `node bin/contact-hooks.js ...args` with exactly `env` (plus PATH), to completion. */
async function cli(args: string[], env: Record<string, string>): Promise<Run> {
  const run = launch('bin/contact-hooks.js', { ...baseEnv(), ...env }, { args, cwd: root, endsByItself: true });
  const code = await finished(run, 60_000);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

const json = <T>(run: Run): T => {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const lines = run.stdout.split('\n');
  expect(lines).toHaveLength(2); // one line, newline-terminated
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0]!) as T;
};

const createKey = async (env: Record<string, string>, account: string, extra: string[] = []) => {
  const created = json<Record<string, string>>(await cli(['keys', 'create', '--account', account, ...extra, '--json'], env));
  expect(Object.keys(created).sort()).toEqual(KEY_FIELDS);
  expect(created.key).toMatch(/^chk_[A-Za-z0-9_-]{43}$/);
  return created as { id: string; key: string; account_id: string; source: string };
};

const ROTATED_FIELDS = ['account_id', 'created_at', 'id', 'key', 'name', 'source'];

/** `keys rotate <id> --json`: the new secret, with the key's unchanged id, account, source and name. */
const rotateKey = async (env: Record<string, string>, id: string) => {
  const rotated = json<Record<string, string | null>>(await cli(['keys', 'rotate', id, '--json'], env));
  expect(Object.keys(rotated).sort()).toEqual(ROTATED_FIELDS);
  expect(rotated.key).toMatch(/^chk_[A-Za-z0-9_-]{43}$/);
  expect(rotated.created_at).toMatch(ISO);
  return rotated as { id: string; key: string; account_id: string; source: string; name: string | null; created_at: string };
};

const listKeys = async (env: Record<string, string>, account: string) => {
  const run = await cli(['keys', 'list', '--account', account, '--json'], env);
  const listed = json<{ keys: ListedKey[] }>(run);
  expect(Object.keys(listed)).toEqual(['keys']);
  for (const key of listed.keys) {
    expect(Object.keys(key).sort()).toEqual(LISTED_FIELDS);
    expect(key.created_at).toMatch(ISO);
  }
  return { keys: listed.keys, stdout: run.stdout };
};

type Server = Awaited<ReturnType<typeof launchWeb>>;

/** The built web process on DATA_DIR, on a free port; resolves once /healthz answers. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const server = await launchWeb({ ...baseEnv(), ...env }, { cwd: root });
  children.add(server);
  return server;
}

const upsertContact = (server: Server, key: string) =>
  fetch(`${server.url}/api/v1/contacts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ phone: '+14155550123', name: 'Ada Lovelace' }),
  });

beforeAll(() => {
  if (!existsSync(join(root, 'dist/src/cli/main.js')) || !existsSync(join(root, 'dist/src/main/web.js'))) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  }
});

afterAll(async () => {
  await Promise.all([...children].map(stop));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('usage', () => {
  const env = () => ({ DATA_DIR: join(tempDir(), 'never-opened') });

  it('--help prints the usage on stdout and exits 0', async () => {
    const run = await cli(['--help'], env());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('contact-hooks keys create --account <id>');
    expect(run.stdout).toContain('contact-hooks keys list --account <id>');
    expect(run.stdout).toContain('contact-hooks keys rotate <key-id>');
    expect(run.stdout).toContain('contact-hooks keys revoke <key-id>');
    expect(run.stdout).toContain('contact-hooks listen --key <api-key> --events <type,...>');
    expect(run.stderr).toBe('');
  });

  it.each([
    [[]],
    [['keys']],
    [['keys', 'rotate']],
    [['frobnicate']],
    [['keys', 'create']],
    [['keys', 'create', '--account']],
    [['keys', 'create', '--account', 'acme', '--bogus']],
    [['keys', 'list']],
    [['keys', 'list', '--account', 'acme', '--source', 'zapier']],
    [['keys', 'rotate', 'a', 'b']],
    [['keys', 'rotate', '--account', 'acme']],
    [['keys', 'revoke']],
    [['keys', 'revoke', 'a', 'b']],
    [['keys', 'revoke', '--account', 'acme']],
    [['keys', 'create', '--account', 'acme', '--json', '--quiet']],
    [['keys', 'list', '--account', 'acme', '--quiet']],
    [['listen']],
    [['listen', '--key', 'chk_x']],
    [['listen', '--events', 'new_contact']],
    [['listen', '--key', 'chk_x', '--events', 'new_contact,bogus']],
    [['listen', '--key', 'chk_x', '--events', 'new_contact', '--port', '70000']],
    [['listen', '--key', 'chk_x', '--events', 'new_contact', '--exit-after', '0']],
    [['listen', '--key', 'chk_x', '--events', 'new_contact', '--server', 'localhost:3000']],
    [['listen', '--key', 'chk_x', '--events', 'new_contact', '--account', 'acme']],
    [['listen', 'now', '--key', 'chk_x', '--events', 'new_contact']],
  ])('%j is a usage error: exit 2 with the usage text, storage untouched', async (args) => {
    const { DATA_DIR } = env();
    const run = await cli(args, { DATA_DIR });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^contact-hooks: .+\n/);
    expect(run.stderr).toContain('Usage:');
    expect(existsSync(DATA_DIR)).toBe(false);
  });

  it('a bad configuration value is one clear line on stderr, exit 1', async () => {
    const bads: Array<Record<string, string>> = [{ DATABASE_URL: 'mysql://localhost/db' }, { INTERNAL_API_TOKEN: 'short' }, { PORT: 'abc' }];
    for (const bad of bads) {
      const run = await cli(['keys', 'list', '--account', 'acme'], { ...env(), ...bad });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stderr).toContain(Object.keys(bad)[0]);
    }
  });
});

// Every CLI run opens PGlite (the first one also creates and migrates it): seconds each.
describe('on PGlite in DATA_DIR, no server running', { timeout: 90_000 }, () => {
  let env: Record<string, string>;

  beforeAll(() => {
    env = { DATA_DIR: join(tempDir(), 'data') };
  });

  it('keys create --json prints one JSON line {id, key, account_id, source}', async () => {
    const created = await createKey(env, 'acme');
    expect(created).toMatchObject({ account_id: 'acme', source: 'api' });
    const labelled = await createKey(env, 'acme', ['--source', 'zapier', '--name', 'Zapier, main']);
    expect(labelled).toMatchObject({ account_id: 'acme', source: 'zapier' });
    expect(labelled.key).not.toBe(created.key);
    // The CLI released DATA_DIR when it was done.
    expect(existsSync(join(env.DATA_DIR!, 'contact-hooks.lock'))).toBe(false);
  });

  it('keys create without --json shows the key once, and says so', async () => {
    const run = await cli(['keys', 'create', '--account', 'text-account'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/chk_[A-Za-z0-9_-]{43}/);
    expect(run.stdout).toMatch(/shown only once/i);
  });

  it('keys list --json lists an account’s keys without secrets', async () => {
    const created = await createKey(env, 'list-account', ['--name', 'first']);
    await createKey(env, 'someone-else');
    const { keys, stdout } = await listKeys(env, 'list-account');
    expect(keys).toEqual([
      {
        id: created.id,
        account_id: 'list-account',
        source: 'api',
        name: 'first',
        created_at: expect.stringMatching(ISO),
        revoked_at: null,
        last_used_at: null,
      },
    ]);
    expect(stdout).not.toContain(created.key);
    expect(stdout).not.toMatch(/chk_|hash/);
    expect((await listKeys(env, 'no-such-account')).keys).toEqual([]);

    const text = await cli(['keys', 'list', '--account', 'list-account'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(created.id);
    expect(text.stdout).not.toContain(created.key);
  });

  it('keys revoke revokes: exit 0, and the list shows revoked_at; a second revoke succeeds and keeps the first time', async () => {
    const created = await createKey(env, 'revoke-account');
    const run = await cli(['keys', 'revoke', created.id], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/revoked/i);
    expect(run.stdout).toContain(created.id);
    const [listed] = (await listKeys(env, 'revoke-account')).keys;
    expect(listed?.revoked_at).toMatch(ISO);

    const again = await cli(['keys', 'revoke', created.id], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(created.id);
    expect((await listKeys(env, 'revoke-account')).keys[0]?.revoked_at).toBe(listed?.revoked_at);
  });

  it('keys rotate --json prints a new secret once, for the same key id, source and name; the old one is gone', async () => {
    const created = await createKey(env, 'rotate-account', ['--source', 'zapier', '--name', 'Zap']);
    const [before] = (await listKeys(env, 'rotate-account')).keys;
    const rotated = await rotateKey(env, created.id);
    expect(rotated).toStrictEqual({
      id: created.id,
      key: expect.any(String),
      account_id: 'rotate-account',
      source: 'zapier',
      name: 'Zap',
      created_at: before!.created_at,
    });
    expect(rotated.key).not.toBe(created.key);
    expect((await listKeys(env, 'rotate-account')).keys).toStrictEqual([before]);

    const text = await cli(['keys', 'rotate', created.id], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/chk_[A-Za-z0-9_-]{43}/);
    expect(text.stdout).not.toContain(rotated.key);
    expect(text.stdout).toMatch(/shown only once/i);
  });

  it('keys rotate of an unknown, malformed or revoked key exits 1 with a message', async () => {
    const revoked = await createKey(env, 'rotate-revoked');
    expect((await cli(['keys', 'revoke', revoked.id], env)).code).toBe(0);
    for (const id of ['3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f', 'not-a-uuid', revoked.id]) {
      const run = await cli(['keys', 'rotate', id], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^contact-hooks: no live key with id .*\n$/);
    }
  });

  it('keys revoke of an unknown id exits 1 with a message', async () => {
    for (const id of ['3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f', 'not-a-uuid']) {
      const run = await cli(['keys', 'revoke', id], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^contact-hooks: no key with id .*\n$/);
    }
  });

  it('an invalid --source or --account exits 1 with a message, and creates nothing', async () => {
    const source = await cli(['keys', 'create', '--account', 'invalid-account', '--source', 'Has Space', '--json'], env);
    expect(source.code).toBe(1);
    expect(source.stdout).toBe('');
    expect(source.stderr).toMatch(/^contact-hooks: invalid --source.*\n$/);

    const account = await cli(['keys', 'create', '--account', '', '--json'], env);
    expect(account.code).toBe(1);
    expect(account.stderr).toMatch(/^contact-hooks: invalid --account.*\n$/);
    const tooLong = await cli(['keys', 'create', '--account', 'a'.repeat(129), '--json'], env);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/invalid --account/);

    expect((await listKeys(env, 'invalid-account')).keys).toEqual([]);
  });

  it('a key it created authenticates against a server started on that DATA_DIR afterwards; a revoked one does not', async () => {
    const created = await createKey(env, 'served-account', ['--source', 'zapier']);
    const revoked = await createKey(env, 'served-account');
    expect((await cli(['keys', 'revoke', revoked.id], env)).code).toBe(0);

    const server = await startServer(env);
    try {
      const response = await upsertContact(server, created.key);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ action: 'inserted' });
      expect((await upsertContact(server, revoked.key)).status).toBe(401);
    } finally {
      await stop(server);
    }
    expect(server.child.exitCode).toBe(0);
  });
});

describe('beside a server running on the same DATA_DIR', { timeout: 60_000 }, () => {
  let env: Record<string, string>;
  let server: Server;
  let lockBefore: string;

  beforeAll(async () => {
    env = { DATA_DIR: join(tempDir(), 'data') };
    server = await startServer({ ...env, INTERNAL_API_TOKEN: TOKEN });
    lockBefore = readFileSync(join(env.DATA_DIR!, 'contact-hooks.lock'), 'utf8');
    expect(JSON.parse(lockBefore)).toEqual({ pid: server.pid, url: server.url });
  });

  afterAll(async () => {
    if (server) await stop(server);
  });

  const serverKey = async () => {
    const response = await fetch(`${server.url}/internal/v1/accounts/direct/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { key: string }).key;
  };

  it('without INTERNAL_API_TOKEN (the server has its own, so none is stored) the CLI refuses, naming the pid, and does not open the database', async () => {
    for (const args of [
      ['keys', 'create', '--account', 'acme', '--json'],
      ['keys', 'list', '--account', 'acme'],
      ['keys', 'revoke', '3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f'],
    ]) {
      const run = await cli(args, env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(String(server.pid));
      expect(run.stderr).toMatch(/in use/);
      expect(run.stderr).toMatch(/INTERNAL_API_TOKEN/);
      expect(run.stderr.split('\n')).toHaveLength(2);
    }
    // The server's lock is as it was, and the server still serves from its database.
    expect(readFileSync(join(env.DATA_DIR!, 'contact-hooks.lock'), 'utf8')).toBe(lockBefore);
    expect((await upsertContact(server, await serverKey())).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('with a wrong INTERNAL_API_TOKEN the server refuses it and the CLI says so', async () => {
    const run = await cli(['keys', 'list', '--account', 'acme', '--json'], { ...env, INTERNAL_API_TOKEN: `${TOKEN}-wrong` });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/INTERNAL_API_TOKEN/);
  });

  it('with INTERNAL_API_TOKEN, create, list, rotate and revoke go through the server, and the new key authenticates', async () => {
    const withToken = { ...env, INTERNAL_API_TOKEN: TOKEN };
    const created = await createKey(withToken, 'through-server', ['--source', 'make', '--name', 'Make']);
    expect(created).toMatchObject({ account_id: 'through-server', source: 'make' });
    expect((await upsertContact(server, created.key)).status).toBe(200);

    const { keys, stdout } = await listKeys(withToken, 'through-server');
    expect(keys).toEqual([
      {
        id: created.id,
        account_id: 'through-server',
        source: 'make',
        name: 'Make',
        created_at: expect.stringMatching(ISO),
        revoked_at: null,
        last_used_at: expect.stringMatching(ISO),
      },
    ]);
    expect(stdout).not.toContain(created.key);

    const invalid = await cli(['keys', 'create', '--account', 'through-server', '--source', 'Has Space'], withToken);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^contact-hooks: invalid --source.*\n$/);

    const rotated = await rotateKey(withToken, created.id);
    expect(rotated).toMatchObject({ id: created.id, account_id: 'through-server', source: 'make', name: 'Make' });
    expect((await upsertContact(server, created.key)).status).toBe(401);
    expect((await upsertContact(server, rotated.key)).status).toBe(200);
    const unknownRotation = await cli(['keys', 'rotate', '3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f'], withToken);
    expect(unknownRotation.code).toBe(1);
    expect(unknownRotation.stderr).toMatch(/no live key with id/);

    const revoke = await cli(['keys', 'revoke', created.id], withToken);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toMatch(/revoked/i);
    expect((await upsertContact(server, rotated.key)).status).toBe(401);
    expect((await listKeys(withToken, 'through-server')).keys[0]?.revoked_at).toMatch(ISO);

    const again = await cli(['keys', 'revoke', created.id], withToken);
    expect(again.code).toBe(0);
    const unknown = await cli(['keys', 'revoke', '3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f'], withToken);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key with id/);
  });

  it('a second server on the same DATA_DIR exits non-zero with an "in use" message; the first keeps serving', async () => {
    const port = await freePort();
    const second = launch(
      entryPoint('web'),
      { ...baseEnv(), ...env, HOST: '127.0.0.1', PORT: String(port), INTERNAL_API_TOKEN: TOKEN },
      { cwd: root, endsByItself: true },
    );
    const code = await finished(second, 20_000);
    const stderr = second.stderr();

    expect(code).not.toBe(0);
    expect(typeof code).toBe('number');
    expect(stderr).toMatch(/in use by process \d+/);
    expect(stderr).toContain(String(server.pid));
    expect(readFileSync(join(env.DATA_DIR!, 'contact-hooks.lock'), 'utf8')).toBe(lockBefore);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await upsertContact(server, await serverKey())).status).toBe(200);
  });
});

describe('beside a server started without INTERNAL_API_TOKEN, or a holder with no address', () => {
  it('the CLI uses the token the server stored in DATA_DIR, and one given that differs is refused, naming its source', async () => {
    const env = { DATA_DIR: join(tempDir(), 'data') };
    const server = await startServer(env);
    try {
      const created = await createKey(env, 'stored-token');
      expect((await upsertContact(server, created.key)).status).toBe(200);
      const quiet = await cli(['keys', 'create', '--account', 'stored-token', '--quiet'], env);
      expect(quiet.code).toBe(0);
      expect(quiet.stdout).toMatch(/^chk_[A-Za-z0-9_-]{43}\n$/);
      expect((await upsertContact(server, quiet.stdout.trim())).status).toBe(200);

      for (const args of [
        ['keys', 'list', '--account', 'acme'],
        ['keys', 'rotate', '3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f'],
        ['keys', 'revoke', '3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f'],
      ]) {
        const run = await cli(args, { ...env, INTERNAL_API_TOKEN: TOKEN });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(String(server.pid));
        expect(run.stderr).toMatch(/refused the token from INTERNAL_API_TOKEN/);
      }
    } finally {
      await stop(server);
    }
  }, 60_000);

  it('a live holder that advertises no address is refused, even with a token', async () => {
    const dataDir = tempDir();
    // This test process is alive and is not the CLI: a holder still starting, as the CLI sees it.
    writeFileSync(join(dataDir, 'contact-hooks.lock'), JSON.stringify({ pid: process.pid }));
    const run = await cli(['keys', 'list', '--account', 'acme'], { DATA_DIR: dataDir, INTERNAL_API_TOKEN: TOKEN });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`in use by process ${process.pid}`);
    expect(readdirSync(dataDir)).toEqual(['contact-hooks.lock']);
  });
});

describe.runIf(engines().includes('postgres'))('with DATABASE_URL (PostgreSQL server)', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    // DATA_DIR is held by a live process: with DATABASE_URL the CLI must not care, nor touch it.
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'contact-hooks.lock'), JSON.stringify({ pid: process.pid }));
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
  });

  afterAll(async () => {
    if (database) {
      expect(readdirSync(env.DATA_DIR!)).toEqual(['contact-hooks.lock']);
      await database.drop();
    }
  });

  it('create, list, rotate and revoke work on the database', async () => {
    const created = await createKey(env, 'pg-account', ['--source', 'hubspot', '--name', 'HubSpot']);
    expect(created).toMatchObject({ account_id: 'pg-account', source: 'hubspot' });

    const { keys, stdout } = await listKeys(env, 'pg-account');
    expect(keys).toEqual([
      {
        id: created.id,
        account_id: 'pg-account',
        source: 'hubspot',
        name: 'HubSpot',
        created_at: expect.stringMatching(ISO),
        revoked_at: null,
        last_used_at: null,
      },
    ]);
    expect(stdout).not.toContain(created.key);

    const rotated = await rotateKey(env, created.id);
    expect(rotated).toMatchObject({ id: created.id, account_id: 'pg-account', source: 'hubspot', name: 'HubSpot' });
    expect(rotated.key).not.toBe(created.key);

    const revoke = await cli(['keys', 'revoke', created.id], env);
    expect(revoke.code).toBe(0);
    expect((await listKeys(env, 'pg-account')).keys[0]?.revoked_at).toMatch(ISO);

    expect((await cli(['keys', 'revoke', created.id], env)).code).toBe(0);
    for (const id of ['3f0c8a1e-2b4d-4c6e-8f00-1a2b3c4d5e6f', 'not-a-uuid']) {
      const unknown = await cli(['keys', 'revoke', id], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no key with id/);
    }

    const invalid = await cli(['keys', 'create', '--account', 'pg-account', '--source', 'Has Space'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/invalid --source/);
  });

  it('an unreachable database is one line on stderr, exit 1', async () => {
    const port = await freePort();
    const run = await cli(['keys', 'list', '--account', 'acme'], { DATA_DIR: env.DATA_DIR!, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none` });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^contact-hooks: the database is unavailable.*DATABASE_URL.*\n$/);
  });
});
