import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError } from '../domain/errors.js';
import type { Services } from '../services/index.js';
import type { Caller } from '../domain/apiKey.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API-key hook on every /api/v1 route. */
    caller: Caller;
  }
}

/** Every /api/v1 request acts as the account of a live API key; anything else is 401 before the body is read. */
export const requireApiKey = (services: Services) => async (request: FastifyRequest) => {
  request.caller = await services.keys.authenticate(request.headers.authorization);
};

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

type Scheme = 'bearer' | 'basic';

/** The bearer token, or the password of Basic credentials, given with a request in one of `schemes`. */
function presentedToken(header: string | undefined, schemes: readonly Scheme[]): string | undefined {
  const [scheme, value] = header?.trim().split(/\s+/, 2) ?? [];
  const named = scheme?.toLowerCase();
  if (!value || !schemes.includes(named as Scheme)) return undefined;
  if (named === 'bearer') return value;
  return Buffer.from(value, 'base64').toString('utf8').split(':').slice(1).join(':');
}

const hasInternalToken = (token: string, request: FastifyRequest, schemes: readonly Scheme[]) => {
  const given = presentedToken(request.headers.authorization, schemes);
  return given !== undefined && sameSecret(given, token);
};

/**
 * First-party routes and /metrics: the token as `Authorization: Bearer` only (machines send it
 * so; Basic credentials are for browsers, which cache and resend them). Hidden (404) when no
 * INTERNAL_API_TOKEN is configured, 401 on a wrong or absent token.
 */
export const requireInternalToken = (token: string | undefined) => async (request: FastifyRequest) => {
  if (!token) throw new NotFoundError();
  if (!hasInternalToken(token, request, ['bearer'])) throw new UnauthorizedError();
};

/**
 * The operators' pages (Bull Board): the same token, also accepted as a Basic password so a
 * browser can log in. It answers directly because Bull Board installs its own error handler.
 */
export const requireOperator = (token: string | undefined) => async (request: FastifyRequest, reply: FastifyReply) => {
  if (!token) return reply.status(404).send({ error: 'not_found' });
  if (hasInternalToken(token, request, ['bearer', 'basic'])) return;
  return reply.status(401).header('www-authenticate', 'Basic realm="contact-hooks operators"').send({ error: 'unauthorized' });
};
