import type { Config } from '../config.js';
import { lockHolder } from '../storage/dataDirLock.js';
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
      if (!config.INTERNAL_API_TOKEN) {
        throw new CliError(
          `DATA_DIR ${config.DATA_DIR} is in use by a running server (process ${holder.pid}, ${holder.url}); ` +
            'the embedded database allows one process, so either stop the server, or set INTERNAL_API_TOKEN to the same value the server has and the CLI will go through its API',
        );
      }
      return httpBackend(holder.url, config.INTERNAL_API_TOKEN, holder.pid);
    }
  }
  return storeBackend(config);
}
