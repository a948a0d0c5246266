import { LimitReachedError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { validateEventType, validateTargetUrl } from '../domain/hooks.js';
import { isUuid } from '../domain/ids.js';
import { secretForStorage } from '../domain/secretBox.js';
import { newSigningSecret } from '../domain/signature.js';
import type { HookRow } from '../storage/hooks.js';
import type { Caller } from '../domain/apiKey.js';
import type { ServiceDeps } from './types.js';

/** How many of a hook's latest deliveries its log shows. */
export const DELIVERY_LOG_LIMIT = 100;

const shown = (hook: HookRow) => ({ ...hook, created_at: hook.created_at.toISOString() });

/** REST Hooks subscriptions, each tied to the key that made it, and their delivery logs. */
export function hookServices({ store, config }: ServiceDeps) {
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

    /** The caller's key's live subscriptions, oldest first, without secrets. */
    async list(caller: Caller) {
      return { hooks: (await store.hooks.listForKey(caller.keyId)).map(shown) };
    },

    async unsubscribe(caller: Caller, hookId: string) {
      if (!isUuid(hookId) || !(await store.hooks.deleteForKey(caller.keyId, hookId))) throw new NotFoundError();
      return { ok: true as const };
    },

    /** The latest deliveries of one of the caller's subscriptions, newest first. */
    async deliveries(caller: Caller, hookId: string) {
      const hook = await hookOf(caller, hookId);
      const rows = await store.deliveries.listForHook(hook.id, DELIVERY_LOG_LIMIT);
      return {
        deliveries: rows.map((row) => ({
          ...row,
          queued_at: row.queued_at.toISOString(),
          attempted_at: row.attempted_at && row.attempted_at.toISOString(),
        })),
      };
    },
  };
}
