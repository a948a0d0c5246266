import { ConfigError, loadConfig, loadDotEnv, type Config } from '../config.js';
import { DatabaseUnavailableError, InvalidInputError } from '../domain/errors.js';
import { isAccountId } from '../domain/ids.js';
import { DataDirBusyError } from '../storage/dataDirLock.js';
import { parseCommand, USAGE, UsageError, type Command } from './args.js';
import { connect } from './connect.js';
import { CliError } from './keyBackend.js';
import { listen } from './listen.js';
import * as output from './output.js';

/**
 * `contact-hooks keys create|list|rotate|revoke`: manages API keys on the same storage as the
 * server (DATABASE_URL, or PGlite in DATA_DIR). PGlite allows one process per data directory, so
 * while a server holds DATA_DIR the CLI goes through that server's /internal/v1 API instead.
 */
async function run(command: Exclude<Command, { name: 'help' | 'listen' }>, config: Config): Promise<string> {
  // The same rule as the API's; an empty id could not even be put in the API's path.
  if ('accountId' in command && !isAccountId(command.accountId)) throw new CliError(output.describeError('invalid_account'));
  const backend = await connect(config);
  try {
    switch (command.name) {
      case 'create': {
        const created = await backend.create(command.accountId, { source: command.source, name: command.keyName });
        if (command.output === 'key') return `${created.key}\n`;
        return command.output === 'json' ? `${JSON.stringify(created)}\n` : output.created(created);
      }
      case 'list': {
        const keys = await backend.list(command.accountId);
        return command.json ? `${JSON.stringify({ keys })}\n` : output.keyTable(command.accountId, keys);
      }
      case 'rotate': {
        const rotated = await backend.rotate(command.keyId);
        if (!rotated) throw new CliError(`no live key with id ${command.keyId} (unknown, or revoked)`);
        return command.json ? `${JSON.stringify(rotated)}\n` : output.rotated(rotated);
      }
      case 'revoke': {
        if (!(await backend.revoke(command.keyId))) throw new CliError(`no key with id ${command.keyId}`);
        return output.revoked(command.keyId);
      }
    }
  } finally {
    await backend.close();
  }
}

/** What went wrong, as one line for stderr. */
function describe(error: unknown): string {
  if (error instanceof ConfigError) return error.message.replace(/:?\n\s*/g, (separator) => (separator.startsWith(':') ? ': ' : '; '));
  if (error instanceof InvalidInputError) return output.describeError(error.code);
  if (error instanceof DatabaseUnavailableError) return output.describeError('unavailable');
  if (error instanceof CliError) return error.message;
  if (error instanceof DataDirBusyError) {
    return `${error.message}: try again in a moment (a server that serves its API is reached through it), or stop that process`;
  }
  return `failed: ${output.describeUnexpected(error)}`;
}

/** Exit status 0 on success, 1 on a failure (one line on stderr), 2 on a usage error. */
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
    loadDotEnv();
    const config = loadConfig();
    if (command.name === 'listen') return await listen(command, config);
    process.stdout.write(await run(command, config));
    return 0;
  } catch (error) {
    process.stderr.write(`contact-hooks: ${describe(error)}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// Exit once the output is flushed, without waiting on anything a library left running.
process.stdout.write('', () => process.exit(code));
