import type { Caller } from '../domain/apiKey.js';

/**
 * How long a process may keep answering for a key it has seen, without asking storage again:
 * a key revoked or rotated in another process (or by the CLI on DATABASE_URL) is refused by this
 * one at most this long after. The process that revokes or rotates forgets the key at once.
 */
export const KEY_CACHE_TTL_MS = 1_000;
/** Bounds the cache; the oldest entries make room first. Unknown keys are never cached. */
const MAX_ENTRIES = 10_000;

/** The live keys this process saw in the last KEY_CACHE_TTL_MS, by the hash of their secret. */
export function createKeyCache(now: () => number = Date.now) {
  const entries = new Map<string, { caller: Caller; until: number }>();
  return {
    get(keyHash: string): Caller | undefined {
      const entry = entries.get(keyHash);
      if (entry && entry.until > now()) return entry.caller;
      entries.delete(keyHash);
      return undefined;
    },
    set(keyHash: string, caller: Caller) {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(keyHash, { caller, until: now() + KEY_CACHE_TTL_MS });
    },
    /** Forgets every secret of a key (revoked, or given a new secret). */
    forget(keyId: string) {
      for (const [keyHash, entry] of entries) if (entry.caller.keyId === keyId) entries.delete(keyHash);
    },
  };
}
