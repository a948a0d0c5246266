import { pino } from 'pino';
import type { Config } from '../config.js';
import type { CreatedKey, ListedKey, RotatedKey } from './keyBackend.js';

/** Warnings go to stderr: stdout carries only the command's answer (one JSON line with --json). */
export const cliLogger = (config: Pick<Config, 'LOG_LEVEL'>) =>
  pino({ level: config.LOG_LEVEL === 'info' || config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace' ? 'warn' : config.LOG_LEVEL }, pino.destination(2));

const ERROR_MESSAGES: Record<string, string> = {
  invalid_source: 'invalid --source: use a short lowercase label without spaces (a-z, 0-9, "_", ".", "-"; at most 64 characters), such as "zapier"',
  invalid_account: 'invalid --account: it must be a non-empty id of at most 128 characters, without control characters',
  invalid_name: 'invalid --name: at most 200 characters',
  unavailable: 'the database is unavailable: is the PostgreSQL server at DATABASE_URL running and reachable?',
};

/** A refusal's code (from the use cases, or the server's `{"error": code}`) as a sentence. */
export const describeError = (code: string) => ERROR_MESSAGES[code] ?? `the request was refused (${code})`;

/** A library's error as one line; an AggregateError (several addresses refused) has no message of its own. */
export function describeUnexpected(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  if (error instanceof AggregateError && error.errors[0] !== undefined) return describeUnexpected(error.errors[0]);
  return (error as NodeJS.ErrnoException).code ?? error.name;
}

export const created = (key: CreatedKey) =>
  `Created key ${key.id} for account ${key.account_id} (source: ${key.source}).\n\n` +
  `  ${key.key}\n\n` +
  'This key is shown only once: store it now. Only its hash is kept; a lost key cannot be recovered, only revoked and replaced.\n';

export const rotated = (key: RotatedKey) =>
  `Rotated key ${key.id} of account ${key.account_id} (source: ${key.source}); the old secret no longer works.\n\n` +
  `  ${key.key}\n\n` +
  'This secret is shown only once: store it now. The key keeps its subscriptions; reconnect the integration with it.\n';

export const revoked = (keyId: string) => `Revoked key ${keyId}; its hooks were deleted.\n`;

export function keyTable(accountId: string, keys: ListedKey[]) {
  if (keys.length === 0) return `No keys for account ${accountId}.\n`;
  const rows = [
    ['ID', 'SOURCE', 'NAME', 'CREATED', 'REVOKED'],
    ...keys.map((key) => [key.id, key.source, key.name ?? '-', key.created_at, key.revoked_at ?? '-']),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
  return `Keys for account ${accountId}:\n${lines.join('\n')}\n`;
}
