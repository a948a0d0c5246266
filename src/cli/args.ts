import { parseArgs } from 'node:util';
import { EVENT_TYPES, isEventType, type EventType } from '../domain/events.js';

/** The CLI's command line: its usage text, and the one parse of argv into a command. */

export const USAGE = `Usage:
  contact-hooks keys create --account <id> [--source <label>] [--name <text>] [--json | --quiet]
  contact-hooks keys list --account <id> [--json]
  contact-hooks keys rotate <key-id> [--json]
  contact-hooks keys revoke <key-id>
  contact-hooks listen --key <api-key> --events <type,...> [--port <n>] [--server <url>] [--exit-after <n>] [--json]
  contact-hooks --help

Manages the API keys of the service, on the same storage as the server: the PostgreSQL database
at DATABASE_URL, or else the embedded database in DATA_DIR (default ./data); and receives
deliveries locally, for development (listen).

  keys create   Issues a key for an account. The key is printed once and only its hash is kept.
                --source labels the integration (lowercase, no spaces; default "api").
  keys list     Lists an account's keys, without secrets.
  keys rotate   Gives a key a new secret, printed once; the old secret stops working at once.
                The key keeps its id, source, name and subscriptions: the answer to a leaked
                key, since the integration reconnects with the new secret and keeps its hooks.
  keys revoke   Revokes a key: it answers 401 at once, and the hooks it created are deleted.
                Revoking a key that is already revoked succeeds and changes nothing.

  --json        Prints one JSON line instead of text.
  --quiet       keys create: prints the key alone, for a shell variable (KEY=$(...)).

  listen        A local HTTPS receiver for development, on 127.0.0.1 (--port, default any free
                port), with a certificate it makes for this run. It subscribes each of --events
                (${EVENT_TYPES.join(', ')}) with --key, prints each delivery as it arrives with
                its signature verified against that subscription's secret, and unsubscribes when
                it stops (Ctrl-C, SIGTERM, or after --exit-after verified deliveries). The service
                it subscribes at is --server, else the server holding DATA_DIR, else
                http://127.0.0.1:$PORT. That server must run with DELIVERY_ALLOW_PRIVATE_NETWORKS=true
                (development only) and the same DATA_DIR, where listen leaves its certificate
                for the service to trust. --json prints one JSON line per delivery.

Without DATABASE_URL, while a server runs on DATA_DIR, the keys commands go through that
server's /internal/v1 API with INTERNAL_API_TOKEN, or else the token the server stored in
DATA_DIR/internal-api-token (it makes one when started without INTERNAL_API_TOKEN).

Exit status: 0 on success, 1 on failure, 2 on a usage error.
`;

/** A command line that does not parse: exit status 2, with the usage. */
export class UsageError extends Error {}
export type Command =
  | { name: 'help' }
  | { name: 'create'; accountId: string; source: string | undefined; keyName: string | undefined; output: 'text' | 'json' | 'key' }
  | { name: 'list'; accountId: string; json: boolean }
  | { name: 'rotate'; keyId: string; json: boolean }
  | { name: 'revoke'; keyId: string }
  | ListenCommand;

export interface ListenCommand {
  name: 'listen';
  key: string;
  events: EventType[];
  port: number;
  server: string | undefined;
  exitAfter: number | undefined;
  json: boolean;
}

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
        quiet: { type: 'boolean', short: 'q' },
        key: { type: 'string' },
        events: { type: 'string' },
        port: { type: 'string' },
        server: { type: 'string' },
        'exit-after': { type: 'string' },
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
  if (group === 'listen') return parseListen(values, positionals.slice(1));
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
      allowOnly(['account', 'source', 'name', 'json', 'quiet']);
      noPositionals();
      if (values.json && values.quiet) throw new UsageError('keys create takes --json or --quiet, not both');
      return {
        name: 'create',
        accountId: account(),
        source: values.source,
        keyName: values.name,
        output: values.json ? 'json' : values.quiet ? 'key' : 'text',
      };
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

/** A whole number within [min, max], or a usage error naming the option. */
function wholeNumber(option: string, text: string, min: number, max: number) {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${option} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function parseListen(values: Record<string, string | boolean | undefined>, rest: string[]): ListenCommand {
  const extra = Object.keys(values).filter((option) => !['key', 'events', 'port', 'server', 'exit-after', 'json'].includes(option));
  if (extra.length > 0) throw new UsageError(`listen does not take ${extra.map((option) => `--${option}`).join(', ')}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const text = (option: string) => {
    const value = values[option];
    return typeof value === 'string' ? value : undefined;
  };
  const key = text('key');
  if (!key) throw new UsageError('listen needs --key <api-key>: issue one with `contact-hooks keys create`');
  const events = (text('events') ?? '')
    .split(',')
    .map((event) => event.trim())
    .filter(Boolean);
  if (events.length === 0) throw new UsageError(`listen needs --events, one or more of ${EVENT_TYPES.join(', ')}, comma-separated`);
  const unknown = events.find((event) => !isEventType(event));
  if (unknown !== undefined) throw new UsageError(`unknown event "${unknown}": use ${EVENT_TYPES.join(', ')}`);
  const server = text('server');
  if (server !== undefined && !/^https?:\/\/[^/]/.test(server))
    throw new UsageError("--server must be the service's http(s) address, such as http://localhost:3000");
  const port = text('port');
  const exitAfter = text('exit-after');
  return {
    name: 'listen',
    key,
    events: [...new Set(events)] as EventType[],
    port: port === undefined ? 0 : wholeNumber('port', port, 1, 65_535),
    server,
    exitAfter: exitAfter === undefined ? undefined : wholeNumber('exit-after', exitAfter, 1, 1_000_000),
    json: values.json === true,
  };
}
