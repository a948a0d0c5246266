import type { Config } from '../config.js';
import { NotFoundError } from '../domain/errors.js';
import { createServices } from '../services/index.js';
import { openStore } from '../storage/store.js';
import { cliLogger } from './output.js';
import type { KeyBackend } from './keyBackend.js';

/** Undefined when the use case answers "not found": the CLI says so in its own words. */
const orNotFound = <T>(work: Promise<T>): Promise<T | undefined> =>
  work.catch((error: unknown) => {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  });

/**
 * The key operations on the store itself (DATABASE_URL, or PGlite in DATA_DIR when no server
 * holds it), through the same use cases the first-party API runs. Opening PGlite takes DATA_DIR's
 * lock: a server that grabbed it in the meantime makes this throw DataDirBusyError.
 */
export async function storeBackend(config: Config): Promise<KeyBackend> {
  const log = cliLogger(config);
  const { store } = await openStore(config, log);
  // No queue in this process: events (the CLI makes none) would wait in the outbox for the relay.
  const { keys } = createServices({ store, events: undefined, config, log });
  return {
    async create(accountId, options) {
      const { id, key, account_id, source } = await keys.issue(accountId, options);
      return { id, key, account_id, source };
    },
    list: async (accountId) => (await keys.list(accountId)).keys,
    rotate: (keyId) => orNotFound(keys.rotate(keyId)),
    revoke: async (keyId) => (await orNotFound(keys.revoke(keyId))) !== undefined,
    close: () => store.close(),
  };
}
