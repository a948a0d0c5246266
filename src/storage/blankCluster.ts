/**
 * The blank cluster: an empty PGlite data directory that the build makes once (initdb), and that
 * a new DATA_DIR starts as a copy of. initdb needs several times the memory of the server itself,
 * so it runs where the service is built, not where it starts; a copy needs next to nothing.
 */
import { PGlite } from '@electric-sql/pglite';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Beside this module once built (dist/src/storage), so the Docker image's copy of dist/src carries it. */
const HOME = fileURLToPath(new URL('./blank-cluster', import.meta.url));
const CLUSTER = 'pgdata';
/** Names the PGlite that made it: another one's cluster may not open, so it is made anew. */
const MADE_BY = 'made-by';
/** Where a copy is made before it is moved into DATA_DIR; PG_VERSION moves last. */
const ASIDE = '.blank-cluster';

const installedPglite = () => {
  const manifest = fileURLToPath(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')));
  return `@electric-sql/pglite ${(JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version}`;
};

/**
 * Readable by every user, writable by its owner: the service may run as another user than the
 * build (the Docker image's `node`), and a copy keeps these modes.
 */
function shareable(path: string) {
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) shareable(inner);
    chmodSync(inner, entry.isDirectory() ? 0o755 : 0o644);
  }
}

const madeBy = (home: string) => (existsSync(join(home, MADE_BY)) ? readFileSync(join(home, MADE_BY), 'utf8') : undefined);

/**
 * Makes the blank cluster unless the installed PGlite made the one there. It is made aside and
 * renamed into place, so a build cut short leaves none rather than half of one.
 */
export async function makeBlankCluster(): Promise<'made' | 'kept'> {
  const version = installedPglite();
  if (madeBy(HOME) === version) return 'kept';
  const aside = `${HOME}.${process.pid}`;
  rmSync(aside, { recursive: true, force: true });
  mkdirSync(aside, { recursive: true });
  // No settings: PGlite writes them into the cluster at every start (openPglite).
  const db = await PGlite.create(join(aside, CLUSTER));
  await db.close();
  writeFileSync(join(aside, MADE_BY), version);
  shareable(aside);
  rmSync(HOME, { recursive: true, force: true });
  renameSync(aside, HOME);
  return 'made';
}

/**
 * Copies the blank cluster into `dataDir`. The copy is made aside and moved in with PG_VERSION
 * last, so a start cut short leaves no half-made cluster that PGlite would take for a real one.
 */
export function copyBlankCluster(dataDir: string) {
  const made = madeBy(HOME);
  if (made !== installedPglite()) {
    throw new Error(
      `${made === undefined ? 'No blank PGlite cluster' : `The blank PGlite cluster was made by ${made}, not the installed one`} at ${HOME}: run \`npm run build\``,
    );
  }
  const aside = join(dataDir, ASIDE);
  rmSync(aside, { recursive: true, force: true });
  cpSync(join(HOME, CLUSTER), aside, { recursive: true });
  const entries = readdirSync(aside).sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'));
  for (const entry of entries) {
    rmSync(join(dataDir, entry), { recursive: true, force: true }); // a leftover of a start cut short
    renameSync(join(aside, entry), join(dataDir, entry));
  }
  rmSync(aside, { recursive: true, force: true });
}
