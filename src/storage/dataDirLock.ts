import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

/**
 * PGlite is one process per data directory: a second one opening it corrupts it. This lock file
 * (created exclusively) makes every other process refuse instead. A lock whose process died is
 * taken over.
 */
export function acquireDataDirLock(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  const path = lockPath(dataDir);
  const write = (holder: LockHolder, flag: 'wx' | 'w') => writeFileSync(path, JSON.stringify(holder), { flag, mode: 0o600 });
  try {
    write({ pid: process.pid }, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = lockHolder(dataDir);
    if (holder) throw new DataDirBusyError(dataDir, holder);
    rmSync(path, { force: true });
    write({ pid: process.pid }, 'wx');
  }
  return {
    advertise: (url: string) => write({ pid: process.pid, url }, 'w'),
    release: () => rmSync(path, { force: true }),
  };
}
