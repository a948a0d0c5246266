import { INTERNAL_TOKEN } from './app.js';

/** A plain JSON client for tests against a running service (the service's own outbound code is not used). */
export function client(baseUrl: string) {
  const call = async (method: string, path: string, auth: string | undefined, body?: unknown) => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    call,
    internal: (method: string, path: string, body?: unknown) => call(method, `/internal/v1${path}`, INTERNAL_TOKEN, body),
    api: (key: string) => (method: string, path: string, body?: unknown) => call(method, `/api/v1${path}`, key, body),
    async newKey(accountId: string, source = 'zapier'): Promise<string> {
      const created = await call('POST', `/internal/v1/accounts/${accountId}/keys`, INTERNAL_TOKEN, { source });
      if (created.status !== 201) throw new Error(`key not issued: ${JSON.stringify(created)}`);
      return created.body.key;
    },
  };
}
