import type { RouteOptions } from 'fastify';
import { z } from 'zod';

/**
 * Every `{"error": code}` the API answers: its status and what it tells a client. The OpenAPI
 * documents describe each route's errors from here, so a code means the same on every route.
 */
export const ERROR_CODES = {
  invalid_json: [400, 'The body is not valid JSON.'],
  invalid_request: [400, 'The body is not a JSON object, or a field, path or query value has the wrong type or shape.'],
  missing_phone: [400, '`phone` is absent, null or blank.'],
  invalid_event: [400, '`event` is not one of new_conversation, missed_call, new_contact.'],
  invalid_target_url: [400, '`target_url` is missing, not an absolute https URL with a host, over 2048 characters, or holds a user name or password.'],
  invalid_max_per_second: [400, '`max_per_second` is not an integer from 1 to 1000.'],
  invalid_source: [400, '`source` does not match [a-z0-9][a-z0-9_.-]{0,63}.'],
  invalid_account: [400, 'The account id is blank or over 128 characters.'],
  invalid_name: [400, 'The name is too long.'],
  invalid_email: [400, 'The email is not shaped like x@y.z, or is over 254 characters.'],
  invalid_caller_number: [400, 'A call that fires events has a caller number that is not a possible phone number.'],
  invalid_status: [400, '`status` is not a comma-separated list of queued, sending, delivered, failed, refused, expired, unknown.'],
  invalid_time: [400, '`since` or `until` is not an ISO 8601 date and time with a zone, such as 2026-11-23T12:00:00Z.'],
  invalid_limit: [400, '`limit` is not an integer from 1 to 100.'],
  invalid_cursor: [400, '`cursor` (or the feed’s `after`) is not a next_cursor that route answered.'],
  invalid_event_id: [400, '`event_id` is not a UUID.'],
  invalid_hook_id: [400, '`hook_id` is not a UUID.'],
  invalid_capabilities: [400, '`capabilities` is not a non-empty list of read and manage.'],
  invalid_expires_in: [400, '`expires_in` is not a whole number of seconds from 60 to 604800 (7 days).'],
  unauthorized: [401, 'The credential is missing, malformed, unknown or revoked.'],
  not_found: [404, 'Nothing with that id here: unknown, malformed, deleted, or not the caller’s; or no route at that path.'],
  method_not_allowed: [405, 'The path takes other methods; the Allow header lists them.'],
  request_timeout: [408, 'The request, headers and body, was not complete within REQUEST_TIMEOUT_MS (default 30 s); the connection is closed.'],
  hook_limit_reached: [409, 'The key already holds MAX_HOOKS_PER_KEY subscriptions (default 100).'],
  cursor_expired: [410, 'The cursor is older than RETENTION_DAYS: events after it may be gone. Read again without it.'],
  payload_too_large: [413, 'The body is over 64 KiB.'],
  unsupported_media_type: [415, 'The body is not application/json.'],
  rate_limited: [429, 'Over RATE_LIMIT_PER_MINUTE requests from this key in a minute (default 600). Wait Retry-After seconds.'],
  internal: [500, 'An unexpected failure; no details are given. Nothing acknowledged is lost.'],
  unavailable: [503, 'Storage did not answer, and nothing was written. Retry.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

const CATALOG_ORDER = Object.keys(ERROR_CODES) as ErrorCode[];
/** Methods whose body Fastify reads, so they can meet the JSON parser's and the body limit's errors. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'invalid_request', 'payload_too_large', 'unsupported_media_type'];
/**
 * What the router and Node's HTTP server answer before any route runs, so any operation can meet
 * them: a path that names nothing, a method the path does not take, a request sent too slowly.
 */
const ANY_ROUTE_ERRORS: ErrorCode[] = ['not_found', 'method_not_allowed', 'request_timeout'];

/** The codes each error schema documents, so a scope can add its own codes to a route's. */
const codesOfSchema = new WeakMap<z.ZodType, ErrorCode[]>();

function errorSchema(codes: ErrorCode[]) {
  const meta: Record<string, unknown> = {
    description: codes.map((code) => `\`${code}\`: ${ERROR_CODES[code][1]}`).join(' '),
    'x-examples': Object.fromEntries(codes.map((code) => [code, { summary: ERROR_CODES[code][1], value: { error: code } }])),
  };
  if (codes.includes('rate_limited')) {
    meta.headers = { 'Retry-After': { type: 'integer', minimum: 1, description: 'Seconds until this key may send again.' } };
  }
  if (codes.includes('method_not_allowed')) {
    meta.headers = { Allow: { type: 'string', description: 'The methods the path takes, comma-separated.' } };
  }
  const schema = z.object({ error: z.string().meta({ enum: codes }) }).meta(meta);
  codesOfSchema.set(schema, codes);
  return schema;
}

/** A route's own error answers by status, for its `response` schema: `...errorAnswers('not_found')`. */
export function errorAnswers(...codes: ErrorCode[]): Record<number, z.ZodType> {
  const statuses = [...new Set(codes.map((code) => ERROR_CODES[code][0]))];
  return Object.fromEntries(statuses.map((status) => [status, errorSchema(codes.filter((code) => ERROR_CODES[code][0] === status))]));
}

/**
 * An onRoute hook for a scope: adds to each route's documented responses the errors that come
 * from outside the route itself. `everyRoute` are the scope's own (its authentication, its rate
 * limit), beside those any route can meet (404, 405, 408); a route that reads a body can meet
 * the JSON parser's and the body limit's; one that validates a body, path or query can answer
 * invalid_request.
 */
export const documentScopeErrors =
  (everyRoute: ErrorCode[]) =>
  (route: RouteOptions): void => {
    if (!route.schema || route.schema.hide) return;
    const readsBody = [route.method].flat().some((method) => BODY_METHODS.has(method));
    const validatesInput = readsBody || Boolean(route.schema.params || route.schema.querystring);
    const common = [...everyRoute, ...ANY_ROUTE_ERRORS, ...(readsBody ? BODY_ERRORS : []), ...(validatesInput ? (['invalid_request'] as const) : [])];
    const response = { ...(route.schema.response as Record<number, z.ZodType> | undefined) };
    for (const status of new Set(common.map((code) => ERROR_CODES[code][0]))) {
      const declared = response[status] ? codesOfSchema.get(response[status]) : [];
      if (!declared) throw new Error(`${route.url}: the ${status} answer must be declared with errorAnswers()`);
      const codes = new Set([...declared, ...common.filter((code) => ERROR_CODES[code][0] === status)]);
      response[status] = errorSchema(CATALOG_ORDER.filter((code) => codes.has(code)));
    }
    route.schema = { ...route.schema, response };
  };
