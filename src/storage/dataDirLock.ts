import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Who holds a data directory: its pid, and once it listens, the address the CLI can go through. */
export interface LockHolder {
  pid: number;
  url?: string;
}

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(`DATA_DIR ${dataDir} is in use by process ${holder.pid}${holder.url ? ` (serving ${holder.url})` : ''}`);
  }
}

const lockPath = (dataDir: string) => join(dataDir, 'contact-hooks.lock');

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The live holder of the directory's lock, if any; a lock left by a dead process does not count. */
export function lockHolder(dataDir: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockHolder;
    return holder.pid !== process.pid && isAlive(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** Directories this process holds: its own pid in a lock file does not tell them from a stale lock. */
const heldHere = new Set<string>();
let tempFiles = 0;

/**
 * Writes the lock file whole: a reader never sees it empty or half-written (which would read as no
 * holder). Exclusive: a hard link fails when the file exists, as O_EXCL does, and brings its content.
 */
function writeLock(path: string, holder: LockHolder, exclusive: boolean) {
  const temp = `${path}.${process.pid}.${tempFiles++}.tmp`;
  writeFileSync(temp, JSON.stringify(holder), { mode: 0o600 });
  try {
    if (!exclusive) renameSync(temp, path);
    else {
      try {
        linkSync(temp, path);
      } catch (error) {
        // A file system without hard links: fall back to an exclusive create.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
        writeFileSync(path, JSON.stringify(holder), { flag: 'wx', mode: 0o600 });
      }
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * PGlite is one process per data directory: a second one opening it corrupts it. This lock file
 * (created exclusively) makes every other process refuse instead. A lock whose process died is
 * taken over. A second acquire in the same process is refused too.
 */
export function acquireDataDirLock(dataDir: string) {
  const key = resolve(dataDir);
  if (heldHere.has(key)) throw new DataDirBusyError(dataDir, { pid: process.pid });
  mkdirSync(dataDir, { recursive: true });
  const path = lockPath(dataDir);
  try {
    writeLock(path, { pid: process.pid }, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = lockHolder(dataDir);
    if (holder) throw new DataDirBusyError(dataDir, holder);
    rmSync(path, { force: true });
    writeLock(path, { pid: process.pid }, true);
  }
  heldHere.add(key);
  return {
    advertise: (url: string) => writeLock(path, { pid: process.pid, url }, false),
    release: () => {
      heldHere.delete(key);
      rmSync(path, { force: true });
    },
  };
}
