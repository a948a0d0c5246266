import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startWeb, stopAllProcesses } from './support/processes.js';

const root = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const packageJson = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

/** The Dockerfile's stages, each with its base image (global ARGs resolved) and instructions. */
function dockerStages() {
  const lines = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Array<{ image: string; name?: string; instructions: string[] }> = [];
  for (const line of lines) {
    const [keyword, ...rest] = line.split(/\s+/);
    if (keyword === 'ARG' && stages.length === 0) {
      const [name, value] = rest.join(' ').split('=');
      args.set(name!, value ?? '');
    } else if (keyword === 'FROM') {
      const image = rest[0]!.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? '');
      stages.push({ image, name: rest[2], instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(line);
    }
  }
  return stages;
}

/** Packages the compiled service imports at run time (type-only imports are gone after tsc). */
function runtimeImports(dir = join(root, 'dist/src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return runtimeImports(path);
    if (!entry.name.endsWith('.js')) return [];
    // Statements that begin a line (tsc writes each import on one), and import() calls: not the
    // word "from" in a string, nor `Buffer.from('localhost')`.
    const statement = /^(?:import\s*|(?:import|export)\b[^'"\n]*?\bfrom\s*)['"]([^'"]+)['"]|(?<!\.)\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
    const specifiers = [...readFileSync(path, 'utf8').matchAll(statement)].map((match) => (match[1] ?? match[2])!);
    return specifiers
      .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:') && !builtinModules.includes(specifier))
      .map((specifier) =>
        specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/'),
      );
  });
}

describe('the Docker image', () => {
  afterAll(async () => {
    await stopAllProcesses();
  });

  const stages = dockerStages();
  const final = stages.at(-1)!;

  it('is built on Node 26 in every stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toMatch(/^node:26(-|$)/);
  });

  it('installs with npm ci, and its final stage takes node_modules from an install without dev dependencies', () => {
    const installs = stages.flatMap((stage) => stage.instructions.filter((line) => /\bnpm (install|i)\b/.test(line)));
    expect(installs).toStrictEqual([]);
    const copied = final.instructions.find((line) => /^COPY --from=\S+ \S*node_modules/.test(line));
    const source = stages.find((stage) => stage.name === copied?.match(/--from=(\S+)/)?.[1]);
    expect(source?.instructions.some((line) => /npm ci\b.*--omit=dev/.test(line))).toBe(true);
  });

  it('leaves bench/, tests and TypeScript sources out of the final stage and the build context', () => {
    const sources = final.instructions
      .filter((line) => line.startsWith('COPY '))
      .flatMap((line) =>
        line
          .split(/\s+/)
          .slice(1, -1)
          .filter((token) => !token.startsWith('--')),
      );
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((source) => ['.', './', 'src', 'bench', 'test'].includes(source.replace(/^\/app\//, '')))).toStrictEqual([]);
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['bench', 'test', 'node_modules', 'dist']));
  });

  it('runs as a user other than root', () => {
    const user = final.instructions.filter((line) => line.startsWith('USER ')).at(-1);
    expect(user).toBeDefined();
    expect(user!.split(/\s+/)[1]).not.toMatch(/^(root|0)(:|$)/);
  });

  it('needs no dev dependency at run time: every package the compiled service imports is a dependency', () => {
    const imported = [...new Set(runtimeImports())];
    expect(imported.length).toBeGreaterThan(5);
    expect(imported.filter((name) => !(name in packageJson.dependencies))).toStrictEqual([]);
  });

  it('has a HEALTHCHECK that passes while /healthz answers and fails when nothing listens', async () => {
    const healthcheck = final.instructions.find((line) => line.startsWith('HEALTHCHECK'));
    const command = JSON.parse(healthcheck!.slice(healthcheck!.indexOf('CMD') + 3).trim()) as string[];
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('/healthz');

    const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-image-'));
    try {
      const web = await startWeb({ DATA_DIR: dataDir });
      const port = new URL(web.url).port;
      const check = (env: Record<string, string>) =>
        spawnSync(process.execPath, command.slice(1), { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 }).status;
      expect(check({ PORT: port })).toBe(0);
      expect(check({ PORT: String(await freePort()) })).toBe(1);
      await web.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
