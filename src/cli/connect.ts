import type { Config } from '../config.js';
import { lockHolder } from '../storage/dataDirLock.js';
import { internalTokenPath, readInternalToken } from '../storage/internalToken.js';
import { httpBackend } from './httpBackend.js';
import { CliError, type KeyBackend } from './keyBackend.js';
import { storeBackend } from './storeBackend.js';

/**
 * Where the keys live for this invocation. PostgreSQL handles concurrency itself; PGlite's data
 * directory is never opened beside the server holding it.
 */
export async function connect(config: Config): Promise<KeyBackend> {
  if (!config.DATABASE_URL) {
    const holder = lockHolder(config.DATA_DIR);
    if (holder) {
      if (!holder.url) {
        throw new CliError(
          `DATA_DIR ${config.DATA_DIR} is in use by process ${holder.pid}, which serves no HTTP API yet (a server still starting, or another command): ` +
            'try again in a moment, or stop that process',
        );
      }
      return httpBackend(holder.url, serverToken(config, holder.pid, holder.url), holder.pid);
    }
  }
  return storeBackend(config);
}

/**
 * The token for the server holding DATA_DIR: INTERNAL_API_TOKEN when set, else the one the server
 * generated and stored in DATA_DIR (it does so when started without one).
 */
function serverToken(config: Config, pid: number, url: string): { value: string; from: string } {
  if (config.INTERNAL_API_TOKEN) return { value: config.INTERNAL_API_TOKEN, from: 'INTERNAL_API_TOKEN' };
  const stored = readInternalToken(config.DATA_DIR);
  if (stored) return { value: stored, from: internalTokenPath(config.DATA_DIR) };
  throw new CliError(
    `DATA_DIR ${config.DATA_DIR} is in use by a running server (process ${pid}, ${url}) started with its own INTERNAL_API_TOKEN; ` +
      'the embedded database allows one process, so either stop the server, or set INTERNAL_API_TOKEN to the same value and the CLI will go through its API',
  );
}
