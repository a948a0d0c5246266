import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of docs/architecture.md, and what each may import: every import points
 * down. `main` wires processes and `cli` is the CLI's process (it opens the store as main does);
 * `api` translates HTTP to services (and shows the queues in Bull Board); `services` use domain
 * rules, storage and the `events` queue; `workers` deliver from the queues into storage;
 * `storage` is SQL on domain types; `queue` is transport; `config` is parsed once and reads
 * domain rules (the secrets key's shape); `domain` and `observability` import nothing of the app.
 */
const ALLOWED: Record<string, readonly string[]> = {
  main: ['api', 'services', 'workers', 'queue', 'storage', 'observability', 'config', 'domain'],
  cli: ['services', 'storage', 'config', 'domain'],
  api: ['services', 'queue', 'observability', 'config', 'domain'],
  services: ['storage', 'queue', 'config', 'domain'],
  workers: ['queue', 'storage', 'observability', 'config', 'domain'],
  storage: ['config', 'domain'],
  queue: [],
  observability: [],
  config: ['domain'],
  domain: [],
};

const SRC = resolve(import.meta.dirname, '../src');

/** A file's layer: its folder under src, or the file's own name for files at the top (config.ts). */
const layerOf = (file: string) => relative(SRC, file).split('/')[0]!.replace(/\.ts$/, '');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Each file of src and the files of src it imports: static, type-only, re-exports and dynamic `import()`. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const local = importedFiles.map(({ fileName }) => fileName).filter((name) => name.startsWith('.'));
    graph.set(
      file,
      local.map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** Imports from one layer into another that the layer may not import, as "from -> to" lines. */
function upwardImports(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([from, targets]) =>
    targets
      .filter((to) => layerOf(to) !== layerOf(from) && !(ALLOWED[layerOf(from)] ?? []).includes(layerOf(to)))
      .map((to) => `${relative(SRC, from)} -> ${relative(SRC, to)}`),
  );
}

/** The import cycles: each strongly connected set of more than one file (or a file importing itself), by Tarjan. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(relative(SRC, member));
    } while (member !== file);
    if (members.length > 1 || graph.get(file)?.includes(file)) cycles.push(members.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

describe('the layers of src', () => {
  const graph = importGraph();

  it('has a rule for every folder of src', () => {
    expect([...new Set([...graph.keys()].map(layerOf))].filter((layer) => !(layer in ALLOWED))).toEqual([]);
  });

  it('imports only downward', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  // The checks themselves, on a made-up graph: a passing suite means nothing if they never fail.
  it('reports an upward import and a cycle', () => {
    const at = (path: string) => join(SRC, path);
    const made = new Map([
      [at('api/auth.ts'), [at('storage/keys.ts'), at('services/index.ts')]],
      [at('services/index.ts'), [at('services/hooks.ts')]],
      [at('services/hooks.ts'), [at('services/index.ts'), at('workers/jobs.ts')]],
      [at('storage/keys.ts'), [at('domain/apiKey.ts')]],
      [at('domain/apiKey.ts'), []],
      [at('workers/jobs.ts'), []],
    ]);
    expect(upwardImports(made)).toEqual(['api/auth.ts -> storage/keys.ts', 'services/hooks.ts -> workers/jobs.ts']);
    expect(importCycles(made)).toEqual([['services/hooks.ts', 'services/index.ts']]);
  });
});
