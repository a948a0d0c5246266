import { CliError } from './keyBackend.js';
import { describeUnexpected } from './output.js';

/** A subscription `listen` made: its secret verifies the deliveries that reach its path. */
export interface ListenHook {
  id: string;
  event: string;
  secret: string;
}

/** One line of a subscription's delivery log, as the public API answers it. */
export interface LoggedDelivery {
  event_id: string;
  event: string;
  status: string;
  error: string | null;
  response_status: number | null;
}

/**
 * The public API (`/api/v1`) as a customer's integration uses it, with an API key: what
 * `contact-hooks listen` needs of it. Each refusal becomes a sentence saying what to do.
 */
export function publicApi(baseUrl: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(new URL(`/api/v1${path}`, baseUrl), {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw new CliError(`could not reach the service at ${baseUrl} (${describeUnexpected(cause)}): is it running? (npm start, or --server <url>)`);
    }
    const json = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    return { status: response.status, json };
  };
  const refused = (status: number, json: Record<string, unknown> | undefined) => {
    if (status === 401) return new CliError(`the service at ${baseUrl} refused the key (401): issue one with \`contact-hooks keys create\``);
    const code = typeof json?.error === 'string' ? ` (${json.error})` : '';
    return new CliError(`the service at ${baseUrl} answered ${status}${code}`);
  };

  return {
    async subscribe(event: string, targetUrl: string): Promise<ListenHook> {
      const { status, json } = await call('POST', '/hooks', { event, target_url: targetUrl });
      if (status !== 201 || typeof json?.id !== 'string' || typeof json.secret !== 'string') throw refused(status, json);
      return { id: json.id, event, secret: json.secret };
    },
    /** Resolves once the subscription is gone; a 404 means it already was. */
    async unsubscribe(hookId: string): Promise<void> {
      const { status, json } = await call('DELETE', `/hooks/${encodeURIComponent(hookId)}`);
      if (status !== 200 && status !== 404) throw refused(status, json);
    },
    async deliveries(hookId: string): Promise<LoggedDelivery[]> {
      const { status, json } = await call('GET', `/hooks/${encodeURIComponent(hookId)}/deliveries`);
      if (status !== 200 || !Array.isArray(json?.deliveries)) throw refused(status, json);
      return json.deliveries as LoggedDelivery[];
    },
  };
}

export type PublicApi = ReturnType<typeof publicApi>;
