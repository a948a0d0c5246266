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
  last_used_at: key.last_used_at && key.last_used_at.toISOString(),
});

/** A key's last use is noted at most this often by a process: "last used" is to the minute, not a write per request. */
const NOTE_USE_EVERY_MS = 60_000;

/** API keys: issuing, listing, revoking and rotating them, and knowing who a request acts as. */
export function keyServices({ store, log }: ServiceDeps) {
  const recent = createKeyCache();
  const noted = new Map<string, number>();
  /** The account's key with that id, live or revoked; not found when it is another account's. */
  const ownersKey = async (accountId: string, keyId: string) => {
    const key = (await store.keys.listForAccount(accountId)).find((row) => row.id === keyId);
    if (!key) throw new NotFoundError();
    return key;
  };
  /** Revokes a key: 401 at once, its subscriptions deleted. Revoking a revoked key changes nothing. */
  const revoke = async (keyId: string) => {
    if (!isUuid(keyId) || !(await store.keys.revoke(keyId))) throw new NotFoundError();
    recent.forget(keyId);
    return { ok: true as const };
  };
  /**
   * The answer to a leaked key: the same key gets a new secret, returned once, here. The old
   * one answers 401 at once; subscriptions stay, so an integration reconnects with the new key
   * and keeps its Zaps. Not found when no live key has that id (unknown or revoked).
   */
  const rotate = async (keyId: string) => {
    const key = newApiKey();
    const row = isUuid(keyId) ? await store.keys.rotate(keyId, hashApiKey(key)) : undefined;
    if (!row) throw new NotFoundError();
    recent.forget(keyId);
    return { id: row.id, key, account_id: row.account_id, source: row.source, name: row.name, created_at: row.created_at.toISOString() };
  };
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

    /**
     * Notes that a caller's request succeeded: the key's "last used". At most once a minute per
     * key and process, and a failure to note is logged, never the request's.
     */
    async noteUse(caller: Caller) {
      const now = Date.now();
      if (now - (noted.get(caller.keyId) ?? 0) < NOTE_USE_EVERY_MS) return;
      if (noted.size >= 10_000) for (const [id, at] of noted) if (now - at >= NOTE_USE_EVERY_MS) noted.delete(id);
      noted.set(caller.keyId, now);
      await store.keys
        .noteUse(caller.keyId)
        .catch((error: unknown) => log.warn({ err: error, keyId: caller.keyId }, 'could not note when a key was last used'));
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

    revoke,

    rotate,

    /** The account's key (its owner's portal), or not found. */
    async getForOwner(accountId: string, keyId: string) {
      return listed(await ownersKey(accountId, keyId));
    },

    /** Revokes a key of the account's (its owner's portal); another account's is not found. */
    async revokeForOwner(accountId: string, keyId: string) {
      await ownersKey(accountId, keyId);
      return revoke(keyId);
    },

    /** Rotates a key of the account's (its owner's portal); another account's is not found. */
    async rotateForOwner(accountId: string, keyId: string) {
      await ownersKey(accountId, keyId);
      return rotate(keyId);
    },
  };
}
