'use strict';

/** What each error code of the service means to a Zap builder, and what to do about it. */
const MESSAGES = {
  missing_phone: 'A phone number is required: map one into the Phone field.',
  invalid_request: 'contact-hooks rejected the request: a field has the wrong type.',
  invalid_json: 'contact-hooks could not read the request body as JSON.',
  invalid_event: 'contact-hooks does not know this event type.',
  invalid_target_url: "contact-hooks refused Zapier's webhook URL: it must be a public https:// address.",
  hook_limit_reached: 'This API key already holds as many subscriptions as contact-hooks allows. Turn off Zaps you no longer use, or connect with another key.',
  not_found: 'contact-hooks has no such record.',
  payload_too_large: 'The request is larger than contact-hooks accepts (64 KiB).',
  unsupported_media_type: 'contact-hooks only accepts JSON bodies.',
  method_not_allowed: 'contact-hooks does not allow this method here; check the server URL.',
  unavailable: 'contact-hooks cannot reach its storage right now. Replay this run in a few minutes.',
  internal: 'contact-hooks failed unexpectedly. Replay this run; if it keeps failing, contact the server operator.',
};

const UNAUTHORIZED = 'contact-hooks refused the API key of this connection: it is unknown or was revoked. Reconnect with a valid key.';

/** Zapier's own default wait when a 429 names none. */
const DEFAULT_RETRY_SECONDS = 60;

/**
 * Turns an error answer (`{"error": code}` with a 4xx or 5xx) into the Zapier error that makes
 * the platform do the right thing: a 401 marks the connection expired (runs are held and the user
 * is asked to reconnect; there is no token to refresh with an API key), a 429 is retried after
 * the service's Retry-After, and anything else is a readable error with the code and status.
 */
const throwForServiceError = (z, response) => {
  if (response.status === 401) throw new z.errors.ExpiredAuthError(UNAUTHORIZED);
  if (response.status === 429) {
    const retryAfter = Number.parseInt(response.getHeader('retry-after') ?? '', 10);
    const delay = Number.isInteger(retryAfter) && retryAfter >= 0 ? retryAfter : DEFAULT_RETRY_SECONDS;
    throw new z.errors.ThrottledError(`contact-hooks is rate limiting this API key; Zapier retries in ${delay} seconds.`, delay);
  }
  const code = typeof response.data?.error === 'string' ? response.data.error : undefined;
  const message =
    code !== undefined && Object.hasOwn(MESSAGES, code)
      ? MESSAGES[code]
      : `contact-hooks answered HTTP ${response.status}${code ? ` (${code})` : ''}. Check the server URL of this connection.`;
  throw new z.errors.Error(message, code ?? `http_${response.status}`, response.status);
};

module.exports = { throwForServiceError };
