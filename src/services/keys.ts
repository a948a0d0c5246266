import { DEFAULT_KEY_SOURCE, hashApiKey, newApiKey, SOURCE_SHAPE } from '../domain/apiKey.js';
import { badRequest } from '../domain/errors.js';
import type { Store } from '../storage/store.js';

const MAX_KEY_NAME_LENGTH = 200;

/** Issues a key for an account. The key itself is returned once, here; only its hash is stored. */
export async function issueApiKey(store: Store, accountId: string, options: { source?: string | undefined; name?: string | undefined }) {
  const source = options.source ?? DEFAULT_KEY_SOURCE;
  if (!SOURCE_SHAPE.test(source)) throw badRequest('invalid_source');
  if (accountId.trim() === '' || accountId.length > 128) throw badRequest('invalid_account');
  if (options.name !== undefined && options.name.length > MAX_KEY_NAME_LENGTH) throw badRequest('invalid_name');
  const key = newApiKey();
  const row = await store.keys.create(accountId, hashApiKey(key), source, options.name);
  return { id: row.id, key, account_id: row.account_id, source: row.source, created_at: row.created_at };
}

/**
 * The answer to a leaked key: the same key gets a new secret, returned once, here. The old one
 * answers 401 at once; subscriptions stay, so an integration reconnects with the new key and
 * keeps its Zaps. Undefined when no live key has that id (unknown or revoked).
 */
export async function rotateApiKey(store: Store, keyId: string) {
  const key = newApiKey();
  const row = await store.keys.rotate(keyId, hashApiKey(key));
  return row && { id: row.id, key, account_id: row.account_id, source: row.source, name: row.name, created_at: row.created_at };
}
