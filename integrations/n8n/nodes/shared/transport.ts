import type { IDataObject, IExecuteFunctions, IHookFunctions, IHttpRequestMethods, INode, IPollFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

type Context = IExecuteFunctions | IHookFunctions | IPollFunctions;

export interface Answer {
  status: number;
  body: IDataObject;
}

/**
 * One call to the service's public API with the node's credentials (the key goes as
 * `Authorization: Bearer`, see the credential's `authenticate`). Every status comes back as an
 * answer: the caller decides which ones are fine (a 404 on unsubscribe, a 410 on the feed).
 */
export async function apiRequest(
  this: Context,
  method: IHttpRequestMethods,
  path: string,
  options: { body?: IDataObject; qs?: IDataObject } = {},
): Promise<Answer> {
  const credentials = await this.getCredentials<{ baseUrl: string }>('contactHooksApi');
  const response = (await this.helpers.httpRequestWithAuthentication.call(this, 'contactHooksApi', {
    method,
    url: `${credentials.baseUrl.replace(/\/+$/, '')}/api/v1${path}`,
    body: options.body,
    qs: options.qs,
    json: true,
    returnFullResponse: true,
    ignoreHttpStatusErrors: true,
  })) as { statusCode: number; body: unknown };
  const body = typeof response.body === 'object' && response.body !== null ? (response.body as IDataObject) : {};
  return { status: response.statusCode, body };
}

/** What each error code of the service means to a workflow builder, and what to do about it. */
const MESSAGES: Record<string, string> = {
  unreachable: 'contact-hooks could not be reached at the server URL of the credential.',
  unauthorized: 'contact-hooks refused the API key of this credential: it is unknown or was revoked. Update the credential with a valid key.',
  missing_phone: 'A phone number is required: set the Phone field.',
  invalid_request: 'contact-hooks rejected the request: a field has the wrong type.',
  invalid_json: 'contact-hooks could not read the request body as JSON.',
  invalid_event: 'contact-hooks does not know this event type.',
  invalid_target_url: "contact-hooks refused this workflow's webhook URL: it must be a public https:// address (set WEBHOOK_URL on your n8n).",
  hook_limit_reached: 'This API key already holds as many subscriptions as contact-hooks allows. Deactivate workflows you no longer use, or use another key.',
  not_found: 'contact-hooks has no such record.',
  rate_limited: 'contact-hooks is rate limiting this API key; try again in a minute.',
  payload_too_large: 'The request is larger than contact-hooks accepts (64 KiB).',
  unavailable: 'contact-hooks cannot reach its storage right now. Retry in a few minutes.',
  internal: 'contact-hooks failed unexpectedly. Retry; if it keeps failing, contact the server operator.',
};

/** The service's `{"error": code}` answer as n8n's API error, with a readable message. */
export function serviceError(node: INode, answer: Answer, itemIndex?: number): NodeApiError {
  const code = typeof answer.body.error === 'string' ? answer.body.error : undefined;
  const message =
    code !== undefined && Object.prototype.hasOwnProperty.call(MESSAGES, code)
      ? MESSAGES[code]
      : `contact-hooks answered HTTP ${answer.status}${code ? ` (${code})` : ''}. Check the server URL of the credential.`;
  return new NodeApiError(node, { ...answer.body, status: answer.status } as JsonObject, {
    message,
    description: code ? `Error code: ${code}` : undefined,
    httpCode: answer.status ? String(answer.status) : undefined,
    itemIndex,
  });
}
