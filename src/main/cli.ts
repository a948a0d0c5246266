import { parseArgs } from 'node:util';
import { isUuid, toIso } from '../api/format.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DomainError } from '../domain/errors.js';
import { issueApiKey } from '../services/keys.js';
import { DataDirBusyError, lockHolder } from '../storage/dataDirLock.js';
import type { ApiKeyRow } from '../storage/keys.js';
import { openStore, type Store } from '../storage/store.js';

/**
 * `contact-hooks keys create|list|revoke`: manages API keys on the same storage as the server
 * (DATABASE_URL, or PGlite in DATA_DIR). PGlite allows one process per data directory, so while a
 * server holds DATA_DIR the CLI goes through that server's /internal/v1 API instead of opening it.
 */

const USAGE = `Usage:
  contact-hooks keys create --account <id> [--source <label>] [--name <text>] [--json]
  contact-hooks keys list --account <id> [--json]
  contact-hooks keys revoke <key-id>
  contact-hooks --help

Manages the API keys of the service, on the same storage as the server: the PostgreSQL database
at DATABASE_URL, or else the embedded database in DATA_DIR (default ./data).

  keys create   Issues a key for an account. The key is printed once and only its hash is kept.
                --source labels the integration (lowercase, no spaces; default "api").
  keys list     Lists an account's keys, without secrets.
  keys revoke   Revokes a key: it answers 401 at once, and the hooks it created are deleted.
                Revoking a key that is already revoked succeeds and changes nothing.

  --json        Prints one JSON line instead of text.

Without DATABASE_URL, while a server runs on DATA_DIR, the CLI goes through that server's
/internal/v1 API, which needs INTERNAL_API_TOKEN set to the server's value.

Exit status: 0 on success, 1 on failure, 2 on a usage error.
`;

class UsageError extends Error {}
/** A failure to report as one line on stderr, exit status 1. */
class CliError extends Error {}

/** A key as the CLI prints it: never a secret, timestamps as ISO 8601. */
interface ListedKey {
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

/** The three operations, done either on the store or through a running server. */
interface KeyBackend {
  create(accountId: string, options: { source?: string | undefined; name?: string | undefined }): Promise<CreatedKey>;
  list(accountId: string): Promise<ListedKey[]>;
  /** False when no key has that id; revoking a revoked key is not an error. */
  revoke(keyId: string): Promise<boolean>;
}

const ERROR_MESSAGES: Record<string, string> = {
  invalid_source: 'invalid --source: use a short lowercase label without spaces (a-z, 0-9, "_", ".", "-"; at most 64 characters), such as "zapier"',
  invalid_account: 'invalid --account: it must be a non-empty id of at most 128 characters',
  // The storage layer reports a database it cannot reach as this code.
  unavailable: 'the database is unavailable: is the PostgreSQL server at DATABASE_URL running and reachable?',
};
const describeError = (code: string) => ERROR_MESSAGES[code] ?? `the request was refused (${code})`;

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
  // A malformed id cannot name a key (and PostgreSQL would reject it as a uuid).
  revoke: async (keyId) => isUuid(keyId) && (await store.keys.revoke(keyId)),
});

/** The first-party API of the server holding DATA_DIR, as the same three operations. */
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
    async revoke(keyId) {
      const { status, json } = await call('DELETE', `/keys/${encodeURIComponent(keyId)}`);
      if (status === 200) return true;
      if (status !== 404) throw unexpected(status, json);
      // 404 is an unknown key, or the whole /internal API hidden because the server has no token.
      const probe = await call('GET', accountPath('contact-hooks-cli-probe'));
      if (probe.status === 404) throw internalApiDisabled();
      return false;
    },
  };
}

/**
 * Where the keys live for this invocation. PostgreSQL handles concurrency itself; PGlite's data
 * directory is never opened beside the server holding it.
 */
async function connect(config: Config): Promise<{ backend: KeyBackend; close: () => Promise<void> }> {
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

type Command =
  | { name: 'help' }
  | { name: 'create'; accountId: string; source: string | undefined; keyName: string | undefined; json: boolean }
  | { name: 'list'; accountId: string; json: boolean }
  | { name: 'revoke'; keyId: string };

function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        account: { type: 'string' },
        source: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || (positionals.length === 1 && positionals[0] === 'help')) return { name: 'help' };

  const [group, action, ...rest] = positionals;
  if (group === undefined) throw new UsageError('missing command');
  if (group !== 'keys') throw new UsageError(`unknown command "${group}"`);
  if (action === undefined) throw new UsageError('missing keys command: create, list or revoke');

  const allowOnly = (allowed: string[]) => {
    const extra = Object.keys(values).filter((option) => !allowed.includes(option));
    if (extra.length > 0) throw new UsageError(`keys ${action} does not take ${extra.map((option) => `--${option}`).join(', ')}`);
  };
  const noPositionals = () => {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  };
  const account = () => {
    if (values.account === undefined) throw new UsageError(`keys ${action} needs --account <id>`);
    return values.account;
  };

  switch (action) {
    case 'create':
      allowOnly(['account', 'source', 'name', 'json']);
      noPositionals();
      return { name: 'create', accountId: account(), source: values.source, keyName: values.name, json: values.json ?? false };
    case 'list':
      allowOnly(['account', 'json']);
      noPositionals();
      return { name: 'list', accountId: account(), json: values.json ?? false };
    case 'revoke': {
      allowOnly([]);
      const [keyId, ...more] = rest;
      if (keyId === undefined) throw new UsageError('keys revoke needs the key id');
      if (more.length > 0) throw new UsageError(`unexpected argument "${more[0]}"`);
      return { name: 'revoke', keyId };
    }
    default:
      throw new UsageError(`unknown keys command "${action}": use create, list or revoke`);
  }
}

const formatList = (accountId: string, keys: ListedKey[]) => {
  if (keys.length === 0) return `No keys for account ${accountId}.\n`;
  const rows = [
    ['ID', 'SOURCE', 'NAME', 'CREATED', 'REVOKED'],
    ...keys.map((key) => [key.id, key.source, key.name ?? '-', key.created_at, key.revoked_at ?? '-']),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
  return `Keys for account ${accountId}:\n${lines.join('\n')}\n`;
};

async function run(command: Exclude<Command, { name: 'help' }>, config: Config): Promise<string> {
  const { backend, close } = await connect(config);
  try {
    switch (command.name) {
      case 'create': {
        const created = await backend.create(command.accountId, { source: command.source, name: command.keyName });
        if (command.json) return `${JSON.stringify(created)}\n`;
        return (
          `Created key ${created.id} for account ${created.account_id} (source: ${created.source}).\n\n` +
          `  ${created.key}\n\n` +
          'This key is shown only once: store it now. Only its hash is kept; a lost key cannot be recovered, only revoked and replaced.\n'
        );
      }
      case 'list': {
        // The same check as key creation; an empty id could not even be put in the API's path.
        if (command.accountId.trim() === '' || command.accountId.length > 128) throw new CliError(describeError('invalid_account'));
        const keys = await backend.list(command.accountId);
        return command.json ? `${JSON.stringify({ keys })}\n` : formatList(command.accountId, keys);
      }
      case 'revoke': {
        if (!(await backend.revoke(command.keyId))) throw new CliError(`no key with id ${command.keyId}`);
        return `Revoked key ${command.keyId}; its hooks were deleted.\n`;
      }
    }
  } finally {
    await close();
  }
}

/** A library's error as one line; an AggregateError (several addresses refused) has no message of its own. */
function describeUnexpected(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  if (error instanceof AggregateError && error.errors[0] !== undefined) return describeUnexpected(error.errors[0]);
  return (error as NodeJS.ErrnoException).code ?? error.name;
}

/** One line on stderr, whatever went wrong; the exit status says which kind. */
async function main(argv: string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`contact-hooks: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    const output = await run(command, loadConfig());
    process.stdout.write(output);
    return 0;
  } catch (error) {
    let message: string;
    if (error instanceof ConfigError) message = error.message.replace(/:?\n\s*/g, (separator) => (separator.startsWith(':') ? ': ' : '; '));
    else if (error instanceof DomainError) message = describeError(error.code);
    else if (error instanceof CliError) message = error.message;
    else if (error instanceof DataDirBusyError) {
      message = `${error.message}: stop that process, or set INTERNAL_API_TOKEN to the server's value so the CLI goes through its API`;
    } else message = `failed: ${describeUnexpected(error)}`;
    process.stderr.write(`contact-hooks: ${message}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// Exit once the output is flushed, without waiting on anything a library left running.
process.stdout.write('', () => process.exit(code));
