import { createHash, randomBytes } from 'node:crypto';

/**
 * The owner's portal: a session the platform mints for one account, opened once through a
 * single-use link, then carried by a cookie. `read` sees the account's keys, hooks and logs;
 * `manage` may also enable, unsubscribe, rotate, revoke and send test events.
 */
export const PORTAL_CAPABILITIES = ['read', 'manage'] as const;
export type PortalCapability = (typeof PORTAL_CAPABILITIES)[number];

/** A link (and the session it opens) lives an hour unless the platform asks otherwise, a minute to a week. */
export const PORTAL_EXPIRY_SECONDS = { default: 3_600, min: 60, max: 7 * 86_400 } as const;

/** The capabilities a session gets: `manage` implies `read` (a manager must see what they manage). */
export const sessionCapabilities = (asked: readonly PortalCapability[]): PortalCapability[] => (asked.includes('manage') ? ['read', 'manage'] : ['read']);

/** A link or session token: 256 random bits, so a plain SHA-256 is stored (as for API keys). */
export const newPortalToken = () => randomBytes(32).toString('base64url');
export const hashPortalToken = (token: string) => createHash('sha256').update(token).digest('hex');
/** Anything not shaped like a token names nothing: refused before storage is asked. */
export const isPortalToken = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);

/**
 * The session's CSRF token, derived from its secret cookie token: a page cannot read the cookie
 * (HttpOnly) nor another site the page, so only the portal's own forms can carry it.
 */
export const csrfTokenOf = (sessionToken: string) => createHash('sha256').update(`csrf\0${sessionToken}`).digest('base64url');
