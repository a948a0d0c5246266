import { encodeCursor, parseDeliveryLogQuery, type DeliveryLogInput } from '../domain/deliveryLog.js';
import { LimitReachedError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { OUTCOME_STATUSES, type OutcomeStatus } from '../domain/hookHealth.js';
import { validateEventType, validateTargetUrl } from '../domain/hooks.js';
import { isUuid } from '../domain/ids.js';
import { secretForStorage } from '../domain/secretBox.js';
import { newSigningSecret } from '../domain/signature.js';
import type { Caller } from '../domain/apiKey.js';
import type { LogRow } from '../storage/deliveries.js';
import type { HookRow, HookWithHealth } from '../storage/hooks.js';
import type { ServiceDeps } from './types.js';

const iso = (time: Date | null) => time && time.toISOString();
const shown = (hook: HookRow) => ({ ...hook, created_at: hook.created_at.toISOString() });

/** A hook with its state and health; last_24h names every outcome, 0 when none. */
const shownWithHealth = ({ state, disabled_reason, disabled_at, last_delivered_at, last_failed_at, consecutive_failures, skipped, last_24h, ...hook }: HookWithHealth) => ({
  ...shown(hook),
  state,
  disabled_reason,
  disabled_at: iso(disabled_at),
  health: {
    last_delivered_at: iso(last_delivered_at),
    last_failed_at: iso(last_failed_at),
    consecutive_failures,
    skipped,
    last_24h: Object.fromEntries(OUTCOME_STATUSES.map((status) => [status, last_24h[status] ?? 0])) as Record<OutcomeStatus, number>,
  },
});

const logPage = ({ rows, next }: { rows: LogRow[]; next: { queuedAt: string; id: string } | undefined }) => ({
  deliveries: rows.map(({ position: _position, ...row }) => ({ ...row, queued_at: row.queued_at.toISOString(), attempted_at: iso(row.attempted_at) })),
  next_cursor: next ? encodeCursor(next) : null,
});

/** REST Hooks subscriptions, each tied to the key that made it, and their delivery logs. */
export function hookServices({ store, config }: ServiceDeps) {
  const ownersHook = async (accountId: string, hookId: string) => {
    const hook = isUuid(hookId) ? await store.hooks.findForAccount(accountId, hookId) : undefined;
    if (!hook) throw new NotFoundError();
    return hook;
  };
  const hookOf = async (caller: Caller, hookId: string) => {
    const hook = isUuid(hookId) ? await store.hooks.findForKey(caller.keyId, hookId) : undefined;
    if (!hook) throw new NotFoundError();
    return hook;
  };

  return {
    /** Subscribes a URL; the answer carries the signing secret, shown only here. */
    async subscribe(caller: Caller, input: { event: string; target_url: string; max_per_second?: number | null | undefined }) {
      const secret = newSigningSecret();
      const created = await store.hooks.create(
        caller,
        {
          eventType: validateEventType(input.event),
          targetUrl: validateTargetUrl(input.target_url),
          maxPerSecond: input.max_per_second ?? null,
          // Stored sealed when SECRETS_KEY is set.
          secret: secretForStorage(secret, config.SECRETS_KEY),
        },
        config.MAX_HOOKS_PER_KEY,
      );
      // The key was revoked after this request's key check: as if it had been revoked before.
      if (created.outcome === 'key_revoked') throw new UnauthorizedError();
      if (created.outcome === 'limit_reached') throw new LimitReachedError('hook_limit_reached');
      return { ...shown(created.hook), secret };
    },

    /** The caller's key's live subscriptions, oldest first, with their health, without secrets. */
    async list(caller: Caller) {
      return { hooks: (await store.hooks.listForKey(caller.keyId)).map(shownWithHealth) };
    },

    /** One of the caller's key's subscriptions, with its health. */
    async get(caller: Caller, hookId: string) {
      return shownWithHealth(await hookOf(caller, hookId));
    },

    /** Enables one of the caller's key's subscriptions (auto-disabled, or not): its streak starts over. */
    async enable(caller: Caller, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.enable({ keyId: caller.keyId }, hookId))) throw new NotFoundError();
      return shownWithHealth(await hookOf(caller, hookId));
    },

    async unsubscribe(caller: Caller, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.deleteForKey(caller.keyId, hookId))) throw new NotFoundError();
      return { ok: true as const };
    },

    /** A page of the delivery log of one of the caller's subscriptions, newest first, filtered. */
    async deliveries(caller: Caller, hookId: string, query: Omit<DeliveryLogInput, 'hook_id'>) {
      const hook = await hookOf(caller, hookId);
      return logPage(await store.deliveries.page({ hookId: hook.id }, parseDeliveryLogQuery(query)));
    },

    /** The owner's view (first-party): every live subscription of the account, with its health. */
    async listForOwner(accountId: string) {
      return { hooks: (await store.hooks.listForAccount(accountId)).map(shownWithHealth) };
    },

    /** The owner enables a subscription of the account's, whichever key made it. */
    async enableForOwner(accountId: string, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.enable({ accountId }, hookId))) throw new NotFoundError();
      return shownWithHealth(await ownersHook(accountId, hookId));
    },

    /** A page of the account's delivery log, across its subscriptions (also deleted ones). */
    async deliveriesForOwner(accountId: string, query: DeliveryLogInput) {
      return logPage(await store.deliveries.page({ accountId }, parseDeliveryLogQuery(query)));
    },
  };
}
