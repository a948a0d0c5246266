import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/storage/pglite.js';

/**
 * The README's quick start, run as written: its script block, taken from the README itself, run
 * by bash from the repository root, from a fresh data directory to a delivery that `contact-hooks
 * listen` prints. It runs in a network namespace of its own (`unshare -rn`, loopback only), so
 * the README's localhost:3000 is free whatever else this machine serves. The script starts
 * `npm start`, which builds first if dist/ is older than the sources (`npm test` builds first).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const MARKER = '`test/quickstart.test.ts` runs this block';

/** The first ```sh block after the sentence naming this test. */
function quickStartScript(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf(MARKER));
  const block = /```sh\n([\s\S]*?)```/.exec(after)?.[1];
  if (readme.indexOf(MARKER) < 0 || block === undefined) throw new Error(`README.md has no sh block after "${MARKER}"`);
  return block;
}

/** Whether this machine can make a network namespace; under CI it must. */
const namespaces = !spawnSync('unshare', ['-rn', 'true']).error && spawnSync('unshare', ['-rn', 'true']).status === 0;
const SKIPPED_BECAUSE = 'skipped: `unshare -rn` (util-linux) cannot make a network namespace here; CI must, and fails instead';
if (!namespaces && !process.env.CI) console.warn(`test/quickstart.test.ts ${SKIPPED_BECAUSE}`);

const work = mkdtempSync(join(tmpdir(), 'contact-hooks-quickstart-'));
const dataDir = join(work, 'data');

/** Processes the script left running (it must leave none): found by the DATA_DIR they were given. */
function leftBehind(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DATA_DIR=${dataDir}`);
      } catch {
        return false; // ended meanwhile, or not ours to read
      }
    })
    .map(Number);
}

afterAll(() => {
  for (const pid of leftBehind()) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe.runIf(namespaces || process.env.CI)(namespaces ? 'the README quick start' : `the README quick start (${SKIPPED_BECAUSE})`, () => {
  it('runs as written: start, a key, listen, a contact, and listen prints the delivery with its signature verified', async () => {
    const script = join(work, 'quickstart.sh');
    writeFileSync(script, quickStartScript());
    expect(existsSync(dataDir)).toBe(false);

    const run = spawn('unshare', ['-rn', 'sh', '-c', 'ip link set lo up && exec bash -e "$0"', script], {
      cwd: root,
      env: {
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? work,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        // Set, so that a developer's own .env (which the environment overrides) cannot move them.
        PORT: '3000',
        DATABASE_URL: '',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk) => (stdout += chunk));
    run.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => run.on('exit', (exitCode, signal) => resolve(exitCode ?? signal)));
    const transcript = `stdout:\n${stdout}\nstderr:\n${stderr}`;

    expect(code, transcript).toBe(0);
    const contactId = /\{"action":"inserted","contact_id":"([0-9a-f-]{36})"\}/.exec(stdout)?.[1];
    expect(contactId, transcript).toBeDefined();
    expect(stdout).toMatch(
      new RegExp(
        `new_contact {2}[0-9a-f-]{36} {2}signature verified {2}\\{"event":"new_contact","data":\\{"contact_id":"${contactId}","name":"Ann","phone":"\\+14155550100","source":"api"\\}\\}`,
      ),
    );
    expect(stderr).toMatch(/Unsubscribed new_contact/);

    // The service drained and stopped (its lock is gone), and nothing was left running.
    expect(existsSync(join(dataDir, 'contact-hooks.lock'))).toBe(false);
    expect(leftBehind()).toStrictEqual([]);
    expect(statSync(join(dataDir, 'internal-api-token')).mode & 0o777).toBe(0o600);
    const db = await openPglite(dataDir);
    try {
      const live = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM hooks WHERE deleted_at IS NULL');
      expect(live.rows[0]!.n).toBe(0); // listen unsubscribed
    } finally {
      await db.close();
    }
  }, 180_000);
});
