import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { EVENT_EXAMPLES } from '../domain/events.js';
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
import type { UseCaseDeps } from './types.js';

const iso = (time: Date | null) => time && time.toISOString();
const shown = (hook: HookRow) => ({ ...hook, created_at: hook.created_at.toISOString() });

/** A hook with its state and health; last_24h names every outcome, 0 when none. */
const shownWithHealth = ({
  key_id: _key,
  state,
  disabled_reason,
  disabled_at,
  last_delivered_at,
  last_failed_at,
  consecutive_failures,
  skipped,
  last_24h,
  ...hook
}: HookWithHealth) => ({
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

/** The owner's view of a hook: also which key made it. */
const ownersView = (hook: HookWithHealth) => ({ ...shownWithHealth(hook), key_id: hook.key_id });

/** A page of the log; `tests` are the ids of its test events (src/storage/testEvents.ts). */
const logPage = ({ rows, next }: { rows: LogRow[]; next: { queuedAt: string; id: string } | undefined }, tests: Set<string>) => ({
  deliveries: rows.map(({ position: _position, ...row }) => ({
    ...row,
    test: tests.has(row.event_id),
    queued_at: row.queued_at.toISOString(),
    attempted_at: iso(row.attempted_at),
  })),
  next_cursor: next ? encodeCursor(next) : null,
});

/** The hours a hook's charts draw: the current one and those of the six days before it. */
const CHART_HOURS = 7 * 24;

/** REST Hooks subscriptions, each tied to the key that made it, and their delivery logs. */
export function hookServices(deps: UseCaseDeps) {
  const { store, config } = deps;
  /** A page of the log with its test events marked (their deliveries' times bound the look-up). */
  const page = async (scope: { hookId: string } | { accountId: string }, query: DeliveryLogInput) => {
    const found = await store.deliveries.page(scope, parseDeliveryLogQuery(query));
    if (found.rows.length === 0) return logPage(found, new Set());
    const times = found.rows.map((row) => row.queued_at.getTime());
    const tests = await store.testEvents.among(
      found.rows.map((row) => row.event_id),
      new Date(Math.min(...times)),
      new Date(Math.max(...times)),
    );
    return logPage(found, tests);
  };
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
      return page({ hookId: hook.id }, query);
    },

    /** The owner's view (first-party): every live subscription of the account, with its health. */
    async listForOwner(accountId: string) {
      return { hooks: (await store.hooks.listForAccount(accountId)).map(ownersView) };
    },

    /** The owner enables a subscription of the account's, whichever key made it. */
    async enableForOwner(accountId: string, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.enable({ accountId }, hookId))) throw new NotFoundError();
      return ownersView(await ownersHook(accountId, hookId));
    },

    /** One subscription of the account's, whichever key made it, with its health (the owner's view). */
    async getForOwner(accountId: string, hookId: string) {
      return ownersView(await ownersHook(accountId, hookId));
    },

    /** The owner unsubscribes a subscription of the account's, whichever key made it. */
    async unsubscribeForOwner(accountId: string, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.deleteForAccount(accountId, hookId))) throw new NotFoundError();
      return { ok: true as const };
    },

    /**
     * Outcomes of a subscription of the account's over the last week, per hour (ISO start) and
     * status, oldest first: what its charts are drawn from.
     */
    async outcomesForOwner(accountId: string, hookId: string) {
      const hook = await ownersHook(accountId, hookId);
      const rows = await store.hooks.outcomeHours(hook.id, CHART_HOURS);
      return rows.map((row) => ({ hour: row.hour.toISOString(), status: row.status as OutcomeStatus, count: row.count }));
    },

    /**
     * Sends a test event to one subscription of the account's: one POST of its event type's
     * catalog example, recorded in its log as a test, and to no other subscription. Its job goes
     * the way of every event's (the events queue, or the relay).
     */
    async sendTest(accountId: string, hookId: string) {
      const hook = await ownersHook(accountId, hookId);
      const fired = await store.testEvents.send(accountId, hook.id, hook.event_type, JSON.stringify(EVENT_EXAMPLES[hook.event_type]), RELAY_GRACE_MS);
      // Unsubscribed, or its key revoked, since it was read.
      if (!fired) throw new NotFoundError();
      deps.enqueue([fired]);
      return { event_id: fired.event_id };
    },

    /** A page of the account's delivery log, across its subscriptions (also deleted ones). */
    async deliveriesForOwner(accountId: string, query: DeliveryLogInput) {
      return page({ accountId }, query);
    },
  };
}
