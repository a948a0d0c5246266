import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The first-party API token an embedded server makes for itself when INTERNAL_API_TOKEN is unset,
 * kept in DATA_DIR so that the CLI (and an operator) on the same machine finds it there.
 */
export const internalTokenPath = (dataDir: string) => join(dataDir, 'internal-api-token');

/** The token a server stored in DATA_DIR, if there is one. */
export function readInternalToken(dataDir: string): string | undefined {
  try {
    return readFileSync(internalTokenPath(dataDir), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The stored token, or a new one (32 random bytes, base64url) written there. Either way the file
 * is left readable and writable by this user only: the token opens every account's keys. Called
 * while holding DATA_DIR's lock, so no other process writes it meanwhile.
 */
export function ensureInternalToken(dataDir: string): { token: string; path: string; generated: boolean } {
  const path = internalTokenPath(dataDir);
  const stored = readInternalToken(dataDir);
  const token = stored ?? randomBytes(32).toString('base64url');
  if (!stored) writeFileSync(path, `${token}\n`, { mode: 0o600 });
  // The create mode is not applied to a file that already existed (an empty one, or one copied in).
  chmodSync(path, 0o600);
  return { token, path, generated: !stored };
}
