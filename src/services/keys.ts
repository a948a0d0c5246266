import { apiKeyFromHeader, DEFAULT_KEY_SOURCE, hashApiKey, newApiKey, validateSource } from '../domain/apiKey.js';
import { InvalidInputError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { isUuid, validateAccountId } from '../domain/ids.js';
import type { Caller } from '../domain/apiKey.js';
import type { ApiKeyRow } from '../storage/keys.js';
import type { ServiceDeps } from './types.js';
import { createKeyCache } from './keyCache.js';

const MAX_KEY_NAME_LENGTH = 200;

/** A key as it is shown: never its secret. */
const listed = (key: ApiKeyRow) => ({
  id: key.id,
  account_id: key.account_id,
  source: key.source,
  name: key.name,
  created_at: key.created_at.toISOString(),
  revoked_at: key.revoked_at && key.revoked_at.toISOString(),
});

/** API keys: issuing, listing, revoking and rotating them, and knowing who a request acts as. */
export function keyServices({ store }: ServiceDeps) {
  const recent = createKeyCache();
  return {
    /**
     * The caller a request's `Authorization: Bearer <key>` stands for; a live key or 401. A key
     * seen in the last second is not looked up again (keyCache.ts).
     */
    async authenticate(authorization: string | undefined): Promise<Caller> {
      const key = apiKeyFromHeader(authorization);
      if (!key) throw new UnauthorizedError();
      const keyHash = hashApiKey(key);
      const cached = recent.get(keyHash);
      if (cached) return cached;
      const caller = await store.keys.findActiveByHash(keyHash);
      if (!caller) throw new UnauthorizedError();
      recent.set(keyHash, caller);
      return caller;
    },

    /** "Who am I": the account and key a caller acts as, never the secret. */
    me: (caller: Caller) => ({
      account_id: caller.accountId,
      key: { id: caller.keyId, source: caller.source, name: caller.name, created_at: caller.createdAt.toISOString() },
    }),

    /** Issues a key for an account. The key itself is returned once, here; only its hash is stored. */
    async issue(accountId: string, options: { source?: string | undefined; name?: string | undefined }) {
      const source = validateSource(options.source ?? DEFAULT_KEY_SOURCE);
      validateAccountId(accountId);
      if (options.name !== undefined && options.name.length > MAX_KEY_NAME_LENGTH) throw new InvalidInputError('invalid_name');
      const key = newApiKey();
      const row = await store.keys.create(accountId, hashApiKey(key), source, options.name);
      return { id: row.id, key, account_id: row.account_id, source: row.source, created_at: row.created_at.toISOString() };
    },

    async list(accountId: string) {
      return { keys: (await store.keys.listForAccount(accountId)).map(listed) };
    },

    /** Revokes a key: 401 at once, its subscriptions deleted. Revoking a revoked key changes nothing. */
    async revoke(keyId: string) {
      if (!isUuid(keyId) || !(await store.keys.revoke(keyId))) throw new NotFoundError();
      recent.forget(keyId);
      return { ok: true as const };
    },

    /**
     * The answer to a leaked key: the same key gets a new secret, returned once, here. The old
     * one answers 401 at once; subscriptions stay, so an integration reconnects with the new key
     * and keeps its Zaps. Not found when no live key has that id (unknown or revoked).
     */
    async rotate(keyId: string) {
      const key = newApiKey();
      const row = isUuid(keyId) ? await store.keys.rotate(keyId, hashApiKey(key)) : undefined;
      if (!row) throw new NotFoundError();
      recent.forget(keyId);
      return { id: row.id, key, account_id: row.account_id, source: row.source, name: row.name, created_at: row.created_at.toISOString() };
    },
  };
}
