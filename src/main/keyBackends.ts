import { isUuid, toIso } from '../api/format.js';
import type { Config } from '../config.js';
import { issueApiKey, rotateApiKey } from '../services/keys.js';
import { lockHolder } from '../storage/dataDirLock.js';
import type { ApiKeyRow } from '../storage/keys.js';
import { openStore, type Store } from '../storage/store.js';

/**
 * Where the CLI's key operations run: on the store (DATABASE_URL, or PGlite in DATA_DIR when no
 * server holds it), or through the first-party API of the server that holds DATA_DIR.
 */

/** A failure to report as one line on stderr, exit status 1. */
export class CliError extends Error {}

/** A key as the CLI prints it: never a secret, timestamps as ISO 8601. */
export interface ListedKey {
  id: string;
  account_id: string;
  source: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

interface CreatedKey {
  id: string;
  key: string;
  account_id: string;
  source: string;
}

interface RotatedKey extends CreatedKey {
  name: string | null;
  created_at: string;
}

/** The key operations, done either on the store or through a running server. */
interface KeyBackend {
  create(accountId: string, options: { source?: string | undefined; name?: string | undefined }): Promise<CreatedKey>;
  list(accountId: string): Promise<ListedKey[]>;
  /** Undefined when no live key has that id. */
  rotate(keyId: string): Promise<RotatedKey | undefined>;
  /** False when no key has that id; revoking a revoked key is not an error. */
  revoke(keyId: string): Promise<boolean>;
}

const ERROR_MESSAGES: Record<string, string> = {
  invalid_source: 'invalid --source: use a short lowercase label without spaces (a-z, 0-9, "_", ".", "-"; at most 64 characters), such as "zapier"',
  invalid_account: 'invalid --account: it must be a non-empty id of at most 128 characters',
  // The storage layer reports a database it cannot reach as this code.
  unavailable: 'the database is unavailable: is the PostgreSQL server at DATABASE_URL running and reachable?',
};
export const describeError = (code: string) => ERROR_MESSAGES[code] ?? `the request was refused (${code})`;

const toListed = (key: ApiKeyRow | ListedKey): ListedKey => ({
  id: key.id,
  account_id: key.account_id,
  source: key.source,
  name: key.name ?? null,
  created_at: typeof key.created_at === 'string' ? key.created_at : toIso(key.created_at),
  revoked_at: key.revoked_at === null ? null : typeof key.revoked_at === 'string' ? key.revoked_at : toIso(key.revoked_at),
});

const storeBackend = (store: Store): KeyBackend => ({
  async create(accountId, options) {
    const created = await issueApiKey(store, accountId, options);
    return { id: created.id, key: created.key, account_id: created.account_id, source: created.source };
  },
  list: async (accountId) => (await store.keys.listForAccount(accountId)).map(toListed),
  async rotate(keyId) {
    const rotated = isUuid(keyId) ? await rotateApiKey(store, keyId) : undefined;
    return rotated && { ...rotated, created_at: toIso(rotated.created_at) };
  },
  // A malformed id cannot name a key (and PostgreSQL would reject it as a uuid).
  revoke: async (keyId) => isUuid(keyId) && (await store.keys.revoke(keyId)),
});

/** The first-party API of the server holding DATA_DIR, as the same operations. */
function httpBackend(baseUrl: string, token: string, pid: number): KeyBackend {
  const call = async (method: string, path: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(new URL(`/internal/v1${path}`, baseUrl), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new CliError(`could not reach the server (process ${pid}) at ${baseUrl}: ${cause}`);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json: json as Record<string, unknown> | undefined };
  };
  const internalApiDisabled = () =>
    new CliError(
      `the server (process ${pid}) at ${baseUrl} has no first-party API enabled (it was started without INTERNAL_API_TOKEN): ` +
        'stop the server to run this command, or restart it with INTERNAL_API_TOKEN set',
    );
  const unexpected = (status: number, json: Record<string, unknown> | undefined) => {
    if (status === 401) {
      return new CliError(`the server (process ${pid}) refused INTERNAL_API_TOKEN: set it to the same value the server was started with`);
    }
    if (status === 404) return internalApiDisabled();
    const code = typeof json?.error === 'string' ? json.error : undefined;
    if (status === 400 && code) return new CliError(describeError(code));
    return new CliError(`the server (process ${pid}) answered ${status}${code ? ` (${code})` : ''}`);
  };
  const accountPath = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/keys`;
  /** A 404 is an unknown key, or the whole /internal API hidden because the server has no token. */
  const refuseIfApiHidden = async () => {
    const probe = await call('GET', accountPath('contact-hooks-cli-probe'));
    if (probe.status === 404) throw internalApiDisabled();
  };

  return {
    async create(accountId, options) {
      const body = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
      const { status, json } = await call('POST', accountPath(accountId), body);
      if (status !== 201 || !json) throw unexpected(status, json);
      return { id: String(json.id), key: String(json.key), account_id: String(json.account_id), source: String(json.source) };
    },
    async list(accountId) {
      const { status, json } = await call('GET', accountPath(accountId));
      if (status !== 200 || !Array.isArray(json?.keys)) throw unexpected(status, json);
      return (json.keys as ListedKey[]).map(toListed);
    },
    async rotate(keyId) {
      const { status, json } = await call('POST', `/keys/${encodeURIComponent(keyId)}/rotate`);
      if (status === 200 && json) {
        const { id, key, account_id, source, name, created_at } = json;
        return {
          id: String(id),
          key: String(key),
          account_id: String(account_id),
          source: String(source),
          name: name === null ? null : String(name),
          created_at: String(created_at),
        };
      }
      if (status !== 404) throw unexpected(status, json);
      await refuseIfApiHidden();
      return undefined;
    },
    async revoke(keyId) {
      const { status, json } = await call('DELETE', `/keys/${encodeURIComponent(keyId)}`);
      if (status === 200) return true;
      if (status !== 404) throw unexpected(status, json);
      await refuseIfApiHidden();
      return false;
    },
  };
}

/**
 * Where the keys live for this invocation. PostgreSQL handles concurrency itself; PGlite's data
 * directory is never opened beside the server holding it.
 */
export async function connect(config: Config): Promise<{ backend: KeyBackend; close: () => Promise<void> }> {
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
      return { backend: httpBackend(holder.url, config.INTERNAL_API_TOKEN, holder.pid), close: async () => {} };
    }
  }
  // Takes DATA_DIR's lock itself; a server that grabbed it in the meantime makes this throw DataDirBusyError.
  const { store } = await openStore(config);
  return { backend: storeBackend(store), close: () => store.close() };
}
