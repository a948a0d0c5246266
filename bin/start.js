#!/usr/bin/env node
/**
 * `npm start`: compiles only when the sources changed since the last build, then runs the web
 * process in this same process (one Node start: no nested npm, no second node). A build that
 * fails emits nothing (noEmitOnError), so the next start tries it again. Like `npm run build`, a
 * build ends by making the blank PGlite cluster (src/main/blankCluster.ts), as does a start that
 * finds none.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The folders tsconfig.build.json compiles, and the files that decide how. */
const SOURCE_DIRS = ['src', 'kit', 'bench', 'scripts'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** Written there by runs, never compiled (git ignores it too). */
const NOT_SOURCES = new Set([join(root, 'bench/results')]);
/** tsc rewrites every output on each build, so any one of them dates the last build. */
const BUILT = join(root, 'dist/src/main/web.js');
/** Written last when the blank cluster is made (src/storage/blankCluster.ts). */
const BLANK_CLUSTER = join(root, 'dist/src/storage/blank-cluster/made-by');

function* typescriptFiles(dir) {
  if (NOT_SOURCES.has(dir) || !existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typescriptFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/**
 * A source edited after the build, or one without its output (added, or renamed: a rename keeps
 * the file's time). A deleted source needs no build: whatever imported it was edited too.
 */
function sourcesChangedSince(built) {
  const compiled = (source) => join(root, 'dist', relative(root, source)).replace(/\.ts$/, '.js');
  const sources = SOURCE_DIRS.flatMap((dir) => [...typescriptFiles(join(root, dir))]);
  return (
    sources.some((source) => statSync(source).mtimeMs > built || !existsSync(compiled(source))) ||
    SETTINGS.some((file) => statSync(join(root, file)).mtimeMs > built)
  );
}

const run = (...args) => {
  const { status } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
};

const building = !existsSync(BUILT) || sourcesChangedSince(statSync(BUILT).mtimeMs);
if (building) run(createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json');
if (building || !existsSync(BLANK_CLUSTER)) run(join(root, 'dist/src/main/blankCluster.js'));
// Files tsc does not emit, the portal's CSS and script and the migrations' SQL: copied on every
// start (a few small files), so an edited asset is served and a new migration applied without a
// build. `npm run build` copies them the same way.
for (const folder of ['src/api/portal/assets', 'src/storage/migrations']) {
  cpSync(join(root, folder), join(root, 'dist', folder), { recursive: true });
}

await import('../dist/src/main/web.js');
