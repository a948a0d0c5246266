import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DomainError } from '../domain/errors.js';
import { DataDirBusyError } from '../storage/dataDirLock.js';
import { CliError, connect, describeError, type ListedKey } from './keyBackends.js';

/**
 * `contact-hooks keys create|list|rotate|revoke`: manages API keys on the same storage as the server
 * (DATABASE_URL, or PGlite in DATA_DIR). PGlite allows one process per data directory, so while a
 * server holds DATA_DIR the CLI goes through that server's /internal/v1 API instead of opening it.
 */

const USAGE = `Usage:
  contact-hooks keys create --account <id> [--source <label>] [--name <text>] [--json]
  contact-hooks keys list --account <id> [--json]
  contact-hooks keys rotate <key-id> [--json]
  contact-hooks keys revoke <key-id>
  contact-hooks --help

Manages the API keys of the service, on the same storage as the server: the PostgreSQL database
at DATABASE_URL, or else the embedded database in DATA_DIR (default ./data).

  keys create   Issues a key for an account. The key is printed once and only its hash is kept.
                --source labels the integration (lowercase, no spaces; default "api").
  keys list     Lists an account's keys, without secrets.
  keys rotate   Gives a key a new secret, printed once; the old secret stops working at once.
                The key keeps its id, source, name and subscriptions: the answer to a leaked
                key, since the integration reconnects with the new secret and keeps its hooks.
  keys revoke   Revokes a key: it answers 401 at once, and the hooks it created are deleted.
                Revoking a key that is already revoked succeeds and changes nothing.

  --json        Prints one JSON line instead of text.

Without DATABASE_URL, while a server runs on DATA_DIR, the CLI goes through that server's
/internal/v1 API, which needs INTERNAL_API_TOKEN set to the server's value.

Exit status: 0 on success, 1 on failure, 2 on a usage error.
`;

class UsageError extends Error {}
type Command =
  | { name: 'help' }
  | { name: 'create'; accountId: string; source: string | undefined; keyName: string | undefined; json: boolean }
  | { name: 'list'; accountId: string; json: boolean }
  | { name: 'rotate'; keyId: string; json: boolean }
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
  if (action === undefined) throw new UsageError('missing keys command: create, list, rotate or revoke');

  const allowOnly = (allowed: string[]) => {
    const extra = Object.keys(values).filter((option) => !allowed.includes(option));
    if (extra.length > 0) throw new UsageError(`keys ${action} does not take ${extra.map((option) => `--${option}`).join(', ')}`);
  };
  const noPositionals = () => {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  };
  const keyId = () => {
    const [id, ...more] = rest;
    if (id === undefined) throw new UsageError(`keys ${action} needs the key id`);
    if (more.length > 0) throw new UsageError(`unexpected argument "${more[0]}"`);
    return id;
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
    case 'rotate':
      allowOnly(['json']);
      return { name: 'rotate', keyId: keyId(), json: values.json ?? false };
    case 'revoke':
      allowOnly([]);
      return { name: 'revoke', keyId: keyId() };
    default:
      throw new UsageError(`unknown keys command "${action}": use create, list, rotate or revoke`);
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
      case 'rotate': {
        const rotated = await backend.rotate(command.keyId);
        if (!rotated) throw new CliError(`no live key with id ${command.keyId} (unknown, or revoked)`);
        if (command.json) return `${JSON.stringify(rotated)}\n`;
        return (
          `Rotated key ${rotated.id} of account ${rotated.account_id} (source: ${rotated.source}); the old secret no longer works.\n\n` +
          `  ${rotated.key}\n\n` +
          'This secret is shown only once: store it now. The key keeps its subscriptions; reconnect the integration with it.\n'
        );
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
