import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', 'dist', 'data', '.git', 'coverage']);

/** Every folder of the repository that commits a package-lock.json next to its package.json. */
function lockedPackages(dir = root): string[] {
  const here = existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'package-lock.json')) ? [dir] : [];
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SKIP.has(entry.name))
    .flatMap((entry) => lockedPackages(join(dir, entry.name)));
  return [...here, ...below];
}

/**
 * `npm ci --dry-run` checks, without installing or reaching the registry, that the lock holds
 * every package that package.json asks for on every platform; `npm ci` refuses a lock that does not.
 */
function npmCiDryRun(dir: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], { cwd: dir }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe('the committed lock', () => {
  it('is found at the root', () => {
    expect(lockedPackages().map((dir) => relative(root, dir))).toContain('');
  });

  it.each(lockedPackages().map((dir) => [relative(root, dir) || '.', dir]))('installs with npm ci in %s', async (_name, dir) => {
    const { code, output } = await npmCiDryRun(dir);
    expect(output).not.toMatch(/in sync|Missing:|Invalid:/);
    expect(code).toBe(0);
  });

  it('is refused by the same check once an optional platform package is missing from it', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'contact-hooks-lock-'));
    try {
      cpSync(join(root, 'package.json'), join(copy, 'package.json'));
      const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
      const platformPackage = Object.keys(lock.packages).find((path) => path.includes('msgpackr-extract-darwin'));
      expect(platformPackage).toBeDefined();
      delete lock.packages[platformPackage!];
      writeFileSync(join(copy, 'package-lock.json'), JSON.stringify(lock, null, 2));
      const { code, output } = await npmCiDryRun(copy);
      expect(code).not.toBe(0);
      expect(output).toContain('Missing:');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
