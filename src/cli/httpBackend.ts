import { describeError } from './output.js';
import { CliError, type KeyBackend, type ListedKey } from './keyBackend.js';

/**
 * The first-party API of the server holding DATA_DIR, as the same operations. `token.from` names
 * where the token came from, for the message when the server refuses it.
 */
export function httpBackend(baseUrl: string, token: { value: string; from: string }, pid: number): KeyBackend {
  const call = async (method: string, path: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(new URL(`/internal/v1${path}`, baseUrl), {
        method,
        headers: { authorization: `Bearer ${token.value}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
  const unexpected = (status: number, json: Record<string, unknown> | undefined) => {
    if (status === 401) {
      return new CliError(
        `the server (process ${pid}) refused the token from ${token.from}: set INTERNAL_API_TOKEN to the same value the server was started with`,
      );
    }
    const code = typeof json?.error === 'string' ? json.error : undefined;
    if (status === 400 && code) return new CliError(describeError(code));
    return new CliError(`the server (process ${pid}) answered ${status}${code ? ` (${code})` : ''}`);
  };
  // An embedded server always serves the first-party API (with the token given, or the one it
  // stored in DATA_DIR), so a 404 from a key's route means that key is unknown.
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
      return json.keys as ListedKey[];
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
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the service answers a string or null; String() only types it
          name: name === null ? null : String(name),
          created_at: String(created_at),
        };
      }
      if (status !== 404) throw unexpected(status, json);
      return undefined;
    },
    async revoke(keyId) {
      const { status, json } = await call('DELETE', `/keys/${encodeURIComponent(keyId)}`);
      if (status === 200) return true;
      if (status !== 404) throw unexpected(status, json);
      return false;
    },
    close: async () => {},
  };
}
