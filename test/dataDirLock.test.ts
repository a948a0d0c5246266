import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirBusyError, lockHolder } from '../src/storage/dataDirLock.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const builtLock = join(root, 'dist/src/storage/dataDirLock.js');
const lockFile = (dir: string) => join(dir, 'contact-hooks.lock');

const dirs: string[] = [];
const children = new Set<ChildProcess>();

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-lock-'));
  dirs.push(dir);
  return dir;
};

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));

/**
 * Runs `script` in another node process with `lock` bound to the built dataDirLock module; resolves
 * once the child printed `ready`, so whatever it does before that has happened.
 */
async function childProcess(script: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `const lock = await import(${JSON.stringify(builtLock)});\n${script}`], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => output.includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before it was ready:\n${output}`)));
  });
  return { child, pid: child.pid!, output: () => output };
}

/** A pid no process has right now: one that just exited. */
function deadPid() {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid!;
  return exited(child).then(() => pid);
}

beforeAll(() => {
  if (!existsSync(builtLock)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
});

afterEach(async () => {
  for (const child of children) {
    child.kill('SIGKILL');
    await exited(child);
  }
  children.clear();
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('acquireDataDirLock in one process', () => {
  it('writes its pid to the lock file, then its address once it advertises one, and removes it on release', () => {
    const dir = tempDir();
    const lock = acquireDataDirLock(dir);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid });
    lock.advertise('http://127.0.0.1:4321');
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid, url: 'http://127.0.0.1:4321' });
    lock.release();
    expect(existsSync(lockFile(dir))).toBe(false);
  });

  it('creates the data directory when it does not exist yet', () => {
    const dir = join(tempDir(), 'nested', 'data');
    const lock = acquireDataDirLock(dir);
    expect(existsSync(lockFile(dir))).toBe(true);
    lock.release();
  });

  it('refuses a second acquire of the same directory in the same process until the first is released', () => {
    const dir = tempDir();
    const lock = acquireDataDirLock(dir);
    expect(() => acquireDataDirLock(dir)).toThrow(DataDirBusyError);
    // Also under another spelling of the same path.
    expect(() => acquireDataDirLock(join(dir, '.'))).toThrow(DataDirBusyError);
    lock.release();
    const again = acquireDataDirLock(dir);
    again.release();
  });

  it('lockHolder does not report this process itself as a holder', () => {
    const dir = tempDir();
    const lock = acquireDataDirLock(dir);
    expect(lockHolder(dir)).toBeUndefined();
    lock.release();
  });

  it('lockHolder reports no holder for a directory without a lock file, or one that does not exist', () => {
    expect(lockHolder(tempDir())).toBeUndefined();
    expect(lockHolder(join(tempDir(), 'missing'))).toBeUndefined();
  });

  it('takes over a stale lock left by a process that died', async () => {
    const dir = tempDir();
    const pid = await deadPid();
    writeFileSync(lockFile(dir), JSON.stringify({ pid, url: 'http://127.0.0.1:1' }));
    expect(lockHolder(dir)).toBeUndefined();
    const lock = acquireDataDirLock(dir);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid });
    lock.release();
  });

  it('takes over a lock file carrying its own pid (a previous life of a container with the same pid)', () => {
    const dir = tempDir();
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid }));
    const lock = acquireDataDirLock(dir);
    expect(() => acquireDataDirLock(dir)).toThrow(DataDirBusyError);
    lock.release();
  });
});

describe('acquireDataDirLock across processes', () => {
  it('a live process holding the lock is reported with its address and makes acquire throw, until it dies', async () => {
    const dir = tempDir();
    const holder = await childProcess(`
      const held = lock.acquireDataDirLock(${JSON.stringify(dir)});
      held.advertise('http://127.0.0.1:4321');
      console.log('ready');
      setInterval(() => {}, 1000);
    `);
    expect(lockHolder(dir)).toEqual({ pid: holder.pid, url: 'http://127.0.0.1:4321' });

    let error: unknown;
    try {
      acquireDataDirLock(dir);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DataDirBusyError);
    expect((error as DataDirBusyError).holder.pid).toBe(holder.pid);
    expect((error as Error).message).toContain(`in use by process ${holder.pid}`);
    // The refused acquire left the holder's lock as it was.
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: holder.pid, url: 'http://127.0.0.1:4321' });

    // Killed without releasing: its lock file stays, and is stale.
    holder.child.kill('SIGKILL');
    await exited(holder.child);
    expect(existsSync(lockFile(dir))).toBe(true);
    expect(lockHolder(dir)).toBeUndefined();
    const lock = acquireDataDirLock(dir);
    expect(lockHolder(dir)).toBeUndefined();
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid });
    lock.release();
  });

  it('a holder before it advertises is reported without an address', async () => {
    const dir = tempDir();
    const holder = await childProcess(`
      lock.acquireDataDirLock(${JSON.stringify(dir)});
      console.log('ready');
      setInterval(() => {}, 1000);
    `);
    expect(lockHolder(dir)).toEqual({ pid: holder.pid });
    expect(() => acquireDataDirLock(dir)).toThrow(DataDirBusyError);
  });

  it('a process refused by a live holder exits without touching the lock', async () => {
    const dir = tempDir();
    const lock = acquireDataDirLock(dir);
    const refused = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const lock = await import(${JSON.stringify(builtLock)});
         try { lock.acquireDataDirLock(${JSON.stringify(dir)}); console.log('acquired'); }
         catch (error) { console.log(error instanceof lock.DataDirBusyError ? 'busy ' + error.holder.pid : String(error)); }`,
      ],
      { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.add(refused);
    let output = '';
    refused.stdout.on('data', (chunk) => (output += chunk));
    await exited(refused);
    expect(output.trim()).toBe(`busy ${process.pid}`);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid });
    lock.release();
  });

  it('a reader never sees the lock half-written while its holder advertises (which would read as no holder)', async () => {
    const dir = tempDir();
    const holder = await childProcess(`
      const held = lock.acquireDataDirLock(${JSON.stringify(dir)});
      console.log('ready');
      for (let i = 0; ; i++) held.advertise('http://127.0.0.1:' + (1000 + (i % 1000)));
    `);
    let misses = 0;
    const deadline = Date.now() + 1_000;
    let reads = 0;
    while (Date.now() < deadline) {
      reads++;
      if (lockHolder(dir)?.pid !== holder.pid) misses++;
    }
    expect(reads).toBeGreaterThan(100);
    expect(misses).toBe(0);
  });
});
