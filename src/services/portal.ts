import { DELIVERY_USER_AGENT } from '../domain/delivery.js';
import type { DeliveryLogInput } from '../domain/deliveryLog.js';
import { ForbiddenError, GoneError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { envelopeBody, type EventType } from '../domain/events.js';
import { isUuid, validateAccountId } from '../domain/ids.js';
import { outcomeSeries } from '../domain/outcomeSeries.js';
import {
  csrfTokenOf,
  hashPortalToken,
  isPortalToken,
  newPortalToken,
  PORTAL_EXPIRY_SECONDS,
  sessionCapabilities,
  type PortalCapability,
} from '../domain/portal.js';
import type { hookServices } from './hooks.js';
import type { keyServices } from './keys.js';
import type { ServiceDeps } from './types.js';

/** What a portal request acts as: one account, with the session's capabilities. */
export interface PortalSession {
  accountId: string;
  capabilities: PortalCapability[];
  expiresAt: string;
  /** The token every form of this session carries (CSRF). */
  csrfToken: string;
}

/** A hook's log filters as the portal takes them: the API's, and the hook's event type. */
export type PortalLogQuery = Omit<DeliveryLogInput, 'hook_id'> & { event?: EventType | undefined };

const iso = (time: Date | null) => time && time.toISOString();

/**
 * The owner's portal: sessions the platform mints, and what their pages show and do, always
 * within the session's account. Views and actions go through the same use cases as the API
 * (keys, hooks), so the portal shows and changes exactly what the API would.
 */
export function portalServices(
  { store, config }: ServiceDeps,
  { keys, hooks }: { keys: ReturnType<typeof keyServices>; hooks: ReturnType<typeof hookServices> },
) {
  /** A write needs `manage`; a read-only session is refused, whatever the form says. */
  const manager = (session: PortalSession) => {
    if (!session.capabilities.includes('manage')) throw new ForbiddenError();
    return session.accountId;
  };

  return {
    /**
     * Mints a session for the account, and the single-use link that opens it, on PUBLIC_BASE_URL
     * or else `requestOrigin` (where the platform reached this service).
     */
    async mint(accountId: string, input: { capabilities?: PortalCapability[] | undefined; expires_in?: number | undefined }, requestOrigin: string) {
      validateAccountId(accountId);
      const token = newPortalToken();
      const capabilities = sessionCapabilities(input.capabilities ?? ['read']);
      const created = await store.portalSessions.create(accountId, capabilities, hashPortalToken(token), input.expires_in ?? PORTAL_EXPIRY_SECONDS.default);
      return { url: `${config.PUBLIC_BASE_URL ?? requestOrigin}/portal/open/${token}`, expires_at: created.expires_at.toISOString() };
    },

    /** Opens a link, once: the token of the cookie that carries its session from now on. */
    async open(linkToken: string) {
      if (!isPortalToken(linkToken)) throw new NotFoundError();
      const sessionToken = newPortalToken();
      const opened = await store.portalSessions.open(hashPortalToken(linkToken), hashPortalToken(sessionToken));
      if (opened === 'unknown') throw new NotFoundError();
      if (opened === 'used') throw new GoneError('link_used');
      if (opened === 'expired') throw new GoneError('link_expired');
      return { sessionToken, expiresAt: opened.expires_at };
    },

    /** The live session a cookie's token stands for; 401 when there is none (ended, expired, never). */
    async authenticate(sessionToken: string | undefined): Promise<PortalSession> {
      const row = sessionToken && isPortalToken(sessionToken) ? await store.portalSessions.find(hashPortalToken(sessionToken)) : undefined;
      if (!row || !sessionToken) throw new UnauthorizedError();
      return { accountId: row.account_id, capabilities: row.capabilities, expiresAt: row.expires_at.toISOString(), csrfToken: csrfTokenOf(sessionToken) };
    },

    /** Ends every session of the account at once, and every link not opened yet. */
    async endSessions(accountId: string) {
      validateAccountId(accountId);
      await store.portalSessions.endForAccount(accountId);
      return { ok: true as const };
    },

    /** Home: the account's keys, oldest first, each with its live subscriptions and their health. */
    async home(session: PortalSession) {
      const [listed, owned] = await Promise.all([keys.list(session.accountId), hooks.listForOwner(session.accountId)]);
      return { keys: listed.keys.map((key) => ({ ...key, hooks: owned.hooks.filter((hook) => hook.key_id === key.id) })) };
    },

    /** A key to revoke, with its live subscriptions: what revoking it would delete (manage). */
    async keyToRevoke(session: PortalSession, keyId: string) {
      const key = await keys.getForOwner(manager(session), keyId);
      const owned = await hooks.listForOwner(session.accountId);
      return { ...key, hooks: owned.hooks.filter((hook) => hook.key_id === key.id) };
    },

    /** A hook to unsubscribe (manage). */
    hookToUnsubscribe: (session: PortalSession, hookId: string) => hooks.getForOwner(manager(session), hookId),

    /** A hook's page: the hook, its outcome charts, and a page of its log, filtered. */
    async hook(session: PortalSession, hookId: string, { event, ...query }: PortalLogQuery) {
      const hook = await hooks.getForOwner(session.accountId, hookId);
      const [outcomes, log] = await Promise.all([
        hooks.outcomesForOwner(session.accountId, hook.id),
        // A hook's deliveries are all of its event type: another type has none.
        event === undefined || event === hook.event_type
          ? hooks.deliveriesForOwner(session.accountId, { ...query, hook_id: hook.id })
          : { deliveries: [], next_cursor: null },
      ]);
      return { hook, charts: outcomeSeries(outcomes, Date.now()), log };
    },

    /** One delivery: the envelope as sent, its headers (without the signature), and its outcome. */
    async delivery(session: PortalSession, deliveryId: string) {
      const row = isUuid(deliveryId) ? await store.deliveryDetails.forAccount(session.accountId, deliveryId) : undefined;
      if (!row) throw new NotFoundError();
      const headers = [
        { name: 'content-type', value: 'application/json' },
        { name: 'user-agent', value: DELIVERY_USER_AGENT },
        { name: 'webhook-id', value: row.event_id },
        { name: 'webhook-timestamp', value: row.attempted_at ? String(Math.floor(row.attempted_at.getTime() / 1000)) : 'set when sent' },
        { name: 'webhook-signature', value: 'v1,… (keyed with the subscription’s secret: not shown)' },
      ];
      return {
        id: row.id,
        hook_id: row.hook_id,
        event_id: row.event_id,
        event: row.event_type,
        test: row.test,
        target_url: row.target_url,
        body: envelopeBody(row.event_type, row.data),
        headers,
        status: row.status,
        response_status: row.response_status,
        error: row.error,
        duration_ms: row.duration_ms,
        queued_at: row.queued_at.toISOString(),
        attempted_at: iso(row.attempted_at),
      };
    },

    enableHook: (session: PortalSession, hookId: string) => hooks.enableForOwner(manager(session), hookId),
    unsubscribe: (session: PortalSession, hookId: string) => hooks.unsubscribeForOwner(manager(session), hookId),
    sendTest: (session: PortalSession, hookId: string) => hooks.sendTest(manager(session), hookId),
    rotateKey: (session: PortalSession, keyId: string) => keys.rotateForOwner(manager(session), keyId),
    revokeKey: (session: PortalSession, keyId: string) => keys.revokeForOwner(manager(session), keyId),
  };
}
