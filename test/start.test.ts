import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, launch, type LaunchedProcess } from '../kit/processes.js';
import { waitUntil } from '../kit/waiting.js';

/**
 * `npm start` (bin/start.js) builds only when the sources changed since the last build. Run in a
 * copy of the repository's sources (node_modules linked), so its builds never touch the dist/
 * the other suites run from. How fast a restart is, is the benchmark's figure 9, not a test.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const copy = mkdtempSync(join(tmpdir(), 'contact-hooks-start-'));
const running: LaunchedProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((service) => service.stop('SIGKILL')));
  rmSync(copy, { recursive: true, force: true });
});

beforeAll(() => {
  for (const entry of ['src', 'kit', 'bench', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    // bench/results holds runs' output, not sources.
    cpSync(join(root, entry), join(copy, entry), { recursive: true, filter: (source) => source !== join(root, 'bench', 'results') });
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
});

const built = () => statSync(join(copy, 'dist/src/main/web.js')).mtimeMs;

/** `node bin/start.js` in the copy until /healthz answers, then stopped; or its exit code if it ends first. */
async function start() {
  const port = await freePort();
  const dataDir = join(copy, 'data');
  const web = launch('bin/start.js', { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' }, { cwd: copy, endsByItself: true });
  running.push(web);
  const healthy = async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true;
  await waitUntil(
    async () => !web.alive() || (await healthy()),
    120_000,
    () => web.output(),
  );
  if (!web.alive()) return { served: false, code: await web.exited, output: web.output() };
  expect(await web.stop('SIGTERM')).toBe(0);
  return { served: true, code: 0, output: web.output() };
}

describe('npm start', () => {
  it('builds when there is no build or a source changed, and only then; a failed build serves nothing and is tried again', async () => {
    const initial = await start();
    expect(initial.served, initial.output).toBe(true); // no dist/: it built
    const first = built();

    expect((await start()).served).toBe(true);
    expect(built()).toBe(first); // nothing changed: no build

    // A source added (or renamed: a rename keeps the file's time) with a time before the build:
    // its output is missing, so that is a change too.
    mkdirSync(join(copy, 'src/extra'), { recursive: true });
    writeFileSync(join(copy, 'src/extra/note.ts'), 'export const note = 1;\n');
    utimesSync(join(copy, 'src/extra/note.ts'), new Date(first - 60_000), new Date(first - 60_000));
    expect((await start()).served).toBe(true);
    const second = built();
    expect(second).toBeGreaterThan(first);

    // An edited source is built; one that does not compile emits nothing and serves nothing.
    const source = join(copy, 'src/domain/ids.ts');
    const original = readFileSync(source, 'utf8');
    writeFileSync(source, `${original}\nexport const broken: number = 'not a number';\n`);
    const failed = await start();
    expect(failed.served).toBe(false);
    expect(failed.code).not.toBe(0);
    expect(failed.output).toMatch(/error TS2322/);
    expect(built()).toBe(second); // nothing emitted, so the next start builds again
    const again = await start();
    expect(again.served).toBe(false);
    expect(again.output).toMatch(/error TS2322/);

    writeFileSync(source, original);
    expect((await start()).served).toBe(true);
    expect(built()).toBeGreaterThan(second);
  }, 300_000);
});
