import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError } from '../../domain/errors.js';

/** The cookie that carries a portal session, sent only to the portal's own paths. */
export const SESSION_COOKIE = 'portal_session';

/**
 * Headers on every portal answer. The page loads only the portal's own CSS and script, sends
 * forms only to itself, and may be framed only by PORTAL_FRAME_ANCESTORS (by nobody when unset).
 * No referrer leaves it, and no page is cached: each shows one account's data.
 */
export function portalHeaders(frameAncestors: readonly string[] | undefined) {
  const ancestors = frameAncestors?.join(' ') ?? "'none'";
  return {
    'content-security-policy': `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors ${ancestors}; base-uri 'none'`,
    // For browsers that predate frame-ancestors; it cannot name origins, so only when none may frame.
    ...(frameAncestors ? {} : { 'x-frame-options': 'DENY' }),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

/** The session token the request's cookie carries, if any. */
export function sessionCookie(request: FastifyRequest): string | undefined {
  for (const pair of request.headers.cookie?.split(';') ?? []) {
    const [name, ...value] = pair.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

/** Sets the session's cookie until the session ends: HttpOnly, SameSite=Lax, and Secure over HTTPS. */
export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, secure: boolean) {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; Path=/portal; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
}

/** A write must carry its session's CSRF token in the form's `csrf` field; anything else is refused. */
export function checkCsrf(body: unknown, expected: string) {
  const given = typeof body === 'object' && body !== null && 'csrf' in body && typeof body.csrf === 'string' ? Buffer.from(body.csrf) : undefined;
  const wanted = Buffer.from(expected);
  if (!given || given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw new ForbiddenError();
}
