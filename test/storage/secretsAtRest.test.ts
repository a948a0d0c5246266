import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { openSecret } from '../../src/domain/secretBox.js';
import type { Database } from '../../src/storage/database.js';
import { sealStoredSecrets } from '../../src/storage/secrets.js';
import type { Store } from '../../src/storage/store.js';
import { buildTestApp, newKey } from '../support/app.js';
import { engines, openTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const key = randomBytes(32);
const SECRETS_KEY = key.toString('base64');

/** SECRETS_KEY over the real store, on each engine: what is written, and the start-up step for what was written before. */
describe.each(engines())('signing secrets at rest on %s', (engine) => {
  let store: Store;
  let db: Database;
  let cleanup: () => Promise<void>;
  let sealing: FastifyInstance;
  let plain: FastifyInstance;

  beforeAll(async () => {
    ({ store, db, cleanup } = await openTestStore(engine));
    ({ app: sealing } = await buildTestApp(store, { SECRETS_KEY }));
    ({ app: plain } = await buildTestApp(store));
  });
  afterAll(async () => {
    await sealing?.close();
    await plain?.close();
    await cleanup?.();
  });

  const subscribe = async (app: FastifyInstance, auth: Record<string, string>) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/hooks',
      headers: auth,
      payload: { event: 'new_contact', target_url: 'https://example.com/h' },
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string; secret: string }>();
  };
  const stored = async (id: string) => (await db.query<{ secret: string }>('SELECT secret FROM hooks WHERE id = $1', [id])).rows[0]!.secret;

  it('stores a new subscription’s secret sealed with SECRETS_KEY, and answers it in the clear once', async () => {
    const hook = await subscribe(sealing, (await newKey(store, newAccount())).auth);
    expect(hook.secret).toMatch(/^whsec_/);
    const value = await stored(hook.id);
    expect(value).toMatch(/^enc:v1:/);
    expect(value).not.toContain(hook.secret.slice(6));
    expect(openSecret(value, key)).toBe(hook.secret);
  });

  it('stores it as it is without SECRETS_KEY', async () => {
    const hook = await subscribe(plain, (await newKey(store, newAccount())).auth);
    expect(await stored(hook.id)).toBe(hook.secret);
  });

  it('seals secrets written before the key was set, once, even when processes start together', async () => {
    const account = await newKey(store, newAccount());
    const before = await Promise.all([1, 2, 3, 4].map(() => subscribe(plain, account.auth)));
    const alreadySealed = await subscribe(sealing, account.auth);
    const sealedValue = await stored(alreadySealed.id);
    const deleted = await subscribe(plain, account.auth);
    await store.hooks.deleteForKey(account.id, deleted.id);

    const plaintext = async () =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hooks WHERE secret <> '' AND secret NOT LIKE 'enc:v1:%'`)).rows[0]!.n;
    const waiting = await plaintext();
    expect(waiting).toBeGreaterThanOrEqual(before.length);

    const sealedCounts = await Promise.all([sealStoredSecrets(db, key), sealStoredSecrets(db, key)]);
    expect(sealedCounts[0] + sealedCounts[1]).toBe(waiting);
    for (const hook of before) expect(openSecret(await stored(hook.id), key)).toBe(hook.secret);
    expect(await stored(alreadySealed.id)).toBe(sealedValue);
    expect(await stored(deleted.id)).toBe('');
    expect(await sealStoredSecrets(db, key)).toBe(0);
    expect(await plaintext()).toBe(0);
  });

  it('refuses to start without the key, or with another key, once secrets are sealed', async () => {
    await subscribe(sealing, (await newKey(store, newAccount())).auth);
    await expect(sealStoredSecrets(db, undefined)).rejects.toThrow(ConfigError);
    await expect(sealStoredSecrets(db, undefined)).rejects.toThrow(/SECRETS_KEY/);
    await expect(sealStoredSecrets(db, randomBytes(32))).rejects.toThrow(/does not open/);
  });
});
