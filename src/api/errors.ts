import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import {
  DatabaseUnavailableError,
  ForbiddenError,
  GoneError,
  InvalidInputError,
  LimitReachedError,
  NotFoundError,
  UnauthorizedError,
} from '../domain/errors.js';

/** The key made more requests than RATE_LIMIT_PER_MINUTE; it may try again after `retryAfterSeconds`. */
export class RateLimitedError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited');
  }
}

/** The server is draining for shutdown: the client should try again (elsewhere). */
export class ShuttingDownError extends Error {
  constructor() {
    super('shutting down');
  }
}

/** Codes a schema's zod message may name directly (see schemas.ts); anything else is invalid_request. */
const SCHEMA_CODES = new Set([
  'missing_phone',
  'invalid_event',
  'invalid_target_url',
  'invalid_max_per_second',
  'invalid_source',
  'invalid_capabilities',
  'invalid_expires_in',
]);

/** Fastify's own request errors, by code, as the service's `{"error": code}`. */
const FRAMEWORK_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
};

/**
 * The one table from what went wrong to what the client is told: the domain's and storage's
 * typed errors, the API's own, then the framework's. Anything else is ours: 500 `internal`.
 */
export function classify(error: FastifyError | Error): { status: number; code: string; headers?: Record<string, string> } {
  if (error instanceof InvalidInputError) return { status: 400, code: error.code };
  if (error instanceof UnauthorizedError) return { status: 401, code: 'unauthorized' };
  if (error instanceof ForbiddenError) return { status: 403, code: 'forbidden' };
  if (error instanceof NotFoundError) return { status: 404, code: 'not_found' };
  if (error instanceof GoneError) return { status: 410, code: error.code };
  if (error instanceof LimitReachedError) return { status: 409, code: error.code };
  if (error instanceof RateLimitedError) return { status: 429, code: 'rate_limited', headers: { 'retry-after': String(error.retryAfterSeconds) } };
  // Nothing was written; the client may retry.
  if (error instanceof DatabaseUnavailableError || error instanceof ShuttingDownError) return { status: 503, code: 'unavailable' };
  return classifyFrameworkError(error as FastifyError);
}

function classifyFrameworkError(error: FastifyError): { status: number; code: string } {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const named = error.validation.map((issue) => issue.message).find((message) => SCHEMA_CODES.has(message ?? ''));
    return { status: 400, code: named ?? 'invalid_request' };
  }
  const known = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
  if (known) return { status: known[0], code: known[1] };
  if (error instanceof SyntaxError && error.statusCode === 400) return { status: 400, code: 'invalid_json' };
  // Any other client error the framework raised (bad header, URL...) stays a 4xx; the rest is ours.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return { status: error.statusCode, code: 'invalid_request' };
  return { status: 500, code: 'internal' };
}

/**
 * Requests Node's HTTP parser refuses (a malformed request line or header, headers too large, a
 * body without framing, a request timeout) never reach routing or the error handler; they are
 * answered here in the same `{"error": code}` shape, and the connection is closed, as Node does.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large']
        : [400, 'invalid_request'];
  if (socket.writable) {
    const body = JSON.stringify({ error: code });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * The router's own refusals (a path that does not decode, a segment too long to be any id) come
 * before every hook and the error handler, so they are answered as `{"error": code}` here, and
 * `record` logs them like any request.
 */
export const routerErrors =
  (record: (request: FastifyRequest, reply: FastifyReply, route: string) => void) => (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const [status, code] =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? [404, 'not_found'] : error.code === 'FST_ERR_BAD_URL' ? [400, 'invalid_request'] : [500, 'internal'];
    reply.status(status).send({ error: code });
    record(request, reply, 'unmatched');
  };

/** The one place errors become responses: `{"error": code}`, never a stack trace or internals. */
export function registerErrorHandling(app: FastifyInstance) {
  const patterns: Array<{ regex: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    // Exact paths only: the router does not ignore a trailing slash or read `.` as a wildcard, so
    // a 405 must not either (it would list as allowed the very method it refuses).
    const path = route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    const regex = new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
    const methods = [route.method].flat();
    const existing = patterns.find((pattern) => pattern.regex.source === regex.source);
    if (existing) methods.forEach((method) => existing.methods.add(method));
    else patterns.push({ regex, methods: new Set(methods) });
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const { status, code, headers } = classify(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return reply
      .status(status)
      .headers(headers ?? {})
      .send({ error: code });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = patterns.find((pattern) => pattern.regex.test(path));
    if (allowed) {
      return reply
        .status(405)
        .header('allow', [...allowed.methods].join(', '))
        .send({ error: 'method_not_allowed' });
    }
    return reply.status(404).send({ error: 'not_found' });
  });
}
