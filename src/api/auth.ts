import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { apiKeyFromHeader, hashApiKey } from '../domain/apiKey.js';
import { notFound, unauthorized } from '../domain/errors.js';
import type { Caller } from '../storage/keys.js';
import type { Store } from '../storage/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API-key hook on every /api/v1 route. */
    caller: Caller;
  }
}

/** Every /api/v1 request acts as the account of a live API key; anything else is 401 before the body is read. */
export const requireApiKey = (store: Store) => async (request: FastifyRequest) => {
  const key = apiKeyFromHeader(request.headers.authorization);
  const caller = key && (await store.keys.findActiveByHash(hashApiKey(key)));
  if (!caller) throw unauthorized();
  request.caller = caller;
};

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The bearer token (or, for a browser on /admin, the Basic password) given with a request. */
function presentedToken(header: string | undefined): string | undefined {
  const [scheme, value] = header?.trim().split(/\s+/, 2) ?? [];
  if (!value) return undefined;
  if (/^bearer$/i.test(scheme ?? '')) return value;
  if (/^basic$/i.test(scheme ?? '')) return Buffer.from(value, 'base64').toString('utf8').split(':').slice(1).join(':');
  return undefined;
}

/**
 * First-party routes: hidden (404) when no INTERNAL_API_TOKEN is configured, 401 on a wrong token.
 */
export const requireInternalToken = (token: string | undefined, options: { browserLogin?: boolean } = {}) =>
  async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    if (!token) throw notFound();
    const given = presentedToken(request.headers.authorization);
    if (given !== undefined && sameSecret(given, token)) return;
    if (options.browserLogin) reply.header('www-authenticate', 'Basic realm="contact-hooks admin"');
    throw unauthorized();
  };
