import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DomainError } from '../domain/errors.js';

/** Codes a schema's zod message may name directly (see schemas.ts); anything else is invalid_request. */
const SCHEMA_CODES = new Set(['missing_phone', 'invalid_event', 'invalid_target_url', 'invalid_source']);

/** Fastify's own request errors, by code, as the service's `{"error": code}`. */
const FRAMEWORK_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
};

function classify(error: FastifyError | DomainError): { status: number; code: string; headers?: Record<string, string> } {
  if (error instanceof DomainError) return { status: error.status, code: error.code, headers: error.headers };
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

/** The one place errors become responses: `{"error": code}`, never a stack trace or internals. */
export function registerErrorHandling(app: FastifyInstance) {
  const patterns: Array<{ regex: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const regex = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}/?$`);
    const methods = [route.method].flat();
    const existing = patterns.find((pattern) => pattern.regex.source === regex.source);
    if (existing) methods.forEach((method) => existing.methods.add(method));
    else patterns.push({ regex, methods: new Set(methods) });
  });

  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
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
      return reply.status(405).header('allow', [...allowed.methods].join(', ')).send({ error: 'method_not_allowed' });
    }
    return reply.status(404).send({ error: 'not_found' });
  });
}
