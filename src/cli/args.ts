import { parseArgs } from 'node:util';

/** The CLI's command line: its usage text, and the one parse of argv into a command. */

export const USAGE = `Usage:
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

/** A command line that does not parse: exit status 2, with the usage. */
export class UsageError extends Error {}
export type Command =
  | { name: 'help' }
  | { name: 'create'; accountId: string; source: string | undefined; keyName: string | undefined; json: boolean }
  | { name: 'list'; accountId: string; json: boolean }
  | { name: 'rotate'; keyId: string; json: boolean }
  | { name: 'revoke'; keyId: string };

export function parseCommand(argv: string[]): Command {
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
