import { ConfigError } from '../config.js';
import { isSealed, openSecret, SEALED_PREFIX, sealSecret } from '../domain/secretBox.js';
import type { Sql } from './database.js';

const BATCH = 500;

/**
 * Run where migrations run, at every start. With a key: seals every signing secret still stored
 * as plaintext (written before the key was set), in batches, each row only if it is unchanged
 * since it was read, so processes starting together never seal a secret twice; then checks that
 * the key opens what is sealed. Without a key: refuses to go on if secrets are sealed, since
 * nothing could sign with them. Returns how many secrets it sealed.
 */
export async function sealStoredSecrets(db: Sql, key: Buffer | undefined): Promise<number> {
  if (!key) {
    const { rows } = await db.query(`SELECT 1 FROM hooks WHERE secret LIKE $1 LIMIT 1`, [`${SEALED_PREFIX}%`]);
    if (rows.length > 0) throw new ConfigError('SECRETS_KEY: the signing secrets are stored encrypted; set SECRETS_KEY to the key they were sealed with');
    return 0;
  }
  let sealed = 0;
  for (;;) {
    // Deleted subscriptions hold an empty secret: nothing to seal.
    const { rows } = await db.query<{ id: string; secret: string }>(
      `SELECT id, secret FROM hooks WHERE secret <> '' AND secret NOT LIKE $1 ORDER BY id LIMIT $2`,
      [`${SEALED_PREFIX}%`, BATCH],
    );
    if (rows.length === 0) break;
    const { rowCount } = await db.query(
      `UPDATE hooks h SET secret = s.sealed FROM unnest($1::uuid[], $2::text[], $3::text[]) AS s (id, plain, sealed)
       WHERE h.id = s.id AND h.secret = s.plain`,
      [rows.map((row) => row.id), rows.map((row) => row.secret), rows.map((row) => sealSecret(row.secret, key))],
    );
    sealed += rowCount;
  }
  const { rows } = await db.query<{ secret: string }>(`SELECT secret FROM hooks WHERE secret LIKE $1 LIMIT 1`, [`${SEALED_PREFIX}%`]);
  const sample = rows[0]?.secret;
  if (sample && isSealed(sample)) {
    try {
      openSecret(sample, key);
    } catch {
      throw new ConfigError('SECRETS_KEY: this key does not open the stored signing secrets; set the key they were sealed with');
    }
  }
  return sealed;
}
