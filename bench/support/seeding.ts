import { randomBytes } from 'node:crypto';

/** Anything that runs one parameterised statement: a pg client, or the service's own Database. */
export type Run = (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }>;

/** The i-th seeded phone of an account: +1415 then seven digits, so up to 10M distinct phones. */
export const seededPhone = (i: number) => `+1415${String(i).padStart(7, '0')}`;

/** Seeds contacts [from, to) of the account in batches (INSERT ... SELECT generate_series). */
export async function seedContacts(run: Run, accountId: string, from: number, to: number) {
  for (let start = from; start < to; start += 200_000) {
    const end = Math.min(to, start + 200_000);
    await run(
      `INSERT INTO contacts (id, account_id, phone, name, source)
       SELECT gen_random_uuid(), $1, '+1415' || lpad(g::text, 7, '0'), 'Seed ' || g, 'seed'
       FROM generate_series($2::int, $3::int - 1) AS g`,
      [accountId, start, end],
    );
  }
}

/** An API key row written directly (hooks reference one); its key is never used. */
export async function insertKeyRow(run: Run, accountId: string): Promise<string> {
  const { rows } = await run(`INSERT INTO api_keys (id, account_id, key_hash, source) VALUES (gen_random_uuid(), $1, $2, 'bench') RETURNING id`, [
    accountId,
    randomBytes(32).toString('hex'),
  ]);
  return (rows[0] as { id: string }).id;
}

/** `count` subscriptions of one account and event type, all to `${targetBase}/<n>`. */
export async function insertHooks(run: Run, keyId: string, accountId: string, eventType: string, targetBase: string, count: number) {
  await run(
    `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, secret)
     SELECT gen_random_uuid(), $1, $2, $3, $4 || '/' || g, 'whsec_' || md5(g::text)
     FROM generate_series(1, $5::int) AS g`,
    [keyId, accountId, eventType, targetBase, count],
  );
}

/**
 * Subscriptions that must not match the measured event (new_conversation of `account`): half
 * are the account's own for other event types, half are other accounts' for any type.
 */
export async function insertFillerHooks(run: Run, keyId: string, account: string, targetBase: string, count: number, offset: number) {
  await run(
    `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, secret)
     SELECT gen_random_uuid(), $1,
            CASE WHEN g % 2 = 0 THEN $2 ELSE 'other-' || (g % 500) END,
            CASE WHEN g % 2 = 0 THEN (ARRAY['missed_call', 'new_contact'])[1 + (g / 2) % 2]
                 ELSE (ARRAY['new_conversation', 'missed_call', 'new_contact'])[1 + g % 3] END,
            $3 || '/' || g, 'whsec_' || md5(g::text)
     FROM generate_series($4::int, $4::int + $5::int - 1) AS g`,
    [keyId, account, targetBase, offset, count],
  );
}
