import { randomUUID } from 'node:crypto';
import type { ContactField, OwnerEdit, StoredContact, ValidContact } from '../domain/contact.js';
import type { Database } from './database.js';
import type { FiredEvent } from '../domain/events.js';
import { recordEvents } from './events.js';

export type UpsertResult =
  | { action: 'inserted'; contactId: string; fired?: FiredEvent }
  | { action: 'updated'; contactId: string }
  | { action: 'skipped'; contactId: string; reason: 'owner_edited' };

interface ContactRow {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  source: string;
  owner_fields: ContactField[];
}

const CONTACT_COLUMNS = 'id, phone, name, email, source, owner_fields';
const toContact = (row: ContactRow): StoredContact => ({ ...row, ownerFields: row.owner_fields });

/** One upsert to apply: the account's contact with this phone, from `source`. */
export interface ContactToUpsert {
  accountId: string;
  input: ValidContact;
  source: string;
}

/**
 * Upserts of distinct contacts in one statement. On an existing contact, the upsert rules of
 * src/domain/contact.ts are applied to the row as it is at that instant, under its lock, so an
 * owner edit racing the upsert always wins: a field sent is written unless the owner holds it; a
 * field not sent (NULL here) is never blanked; when every field sent is owner-held, nothing is
 * written and the upsert is `skipped` (`owner_edited`). A new contact's `new_contact` event is
 * recorded by the same statement (events.ts, `recordEvents`). Rows are inserted in (account,
 * phone) order, so two batches that share contacts lock them in the same order and never
 * deadlock. Each input row `n` gets a row back, except one whose contact was committed by another
 * upsert after this statement's snapshot while nothing here changed it.
 */
const UPSERT_DISTINCT = `WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::json[])
      WITH ORDINALITY AS i (id, account_id, phone, name, email, source, event_id, data, n)),
  upserted AS (
    INSERT INTO contacts AS c (id, account_id, phone, name, email, source)
    SELECT id, account_id, phone, name, email, source FROM input ORDER BY account_id, phone
    ON CONFLICT (account_id, phone) DO UPDATE SET
      name = CASE WHEN 'name' = ANY(c.owner_fields) THEN c.name ELSE coalesce(EXCLUDED.name, c.name) END,
      email = CASE WHEN 'email' = ANY(c.owner_fields) THEN c.email ELSE coalesce(EXCLUDED.email, c.email) END,
      updated_at = clock_timestamp()
    -- Only when a field sent and not owner-held differs: an upsert that changes nothing writes nothing.
    WHERE (EXCLUDED.name IS NOT NULL AND NOT 'name' = ANY(c.owner_fields) AND EXCLUDED.name IS DISTINCT FROM c.name)
       OR (EXCLUDED.email IS NOT NULL AND NOT 'email' = ANY(c.owner_fields) AND EXCLUDED.email IS DISTINCT FROM c.email)
    RETURNING c.id, c.account_id, c.phone, (c.xmax = 0) AS inserted),
  pending AS (
    SELECT i.event_id AS id, i.account_id, 'new_contact' AS event_type, i.data, NULL::uuid AS hook_id FROM input i JOIN upserted u USING (account_id, phone) WHERE u.inserted),
  ${recordEvents('pending', '$9')}
  SELECT i.n::int AS n, u.id, CASE WHEN u.inserted THEN 'inserted' ELSE 'updated' END AS action, CASE WHEN f.fans_out THEN f.fired_at END AS fired_at
  FROM input i JOIN upserted u USING (account_id, phone) LEFT JOIN fired f ON f.id = i.event_id
  UNION ALL
  SELECT i.n::int, c.id,
    CASE WHEN (i.name IS NOT NULL OR i.email IS NOT NULL)
          AND (i.name IS NULL OR 'name' = ANY(c.owner_fields)) AND (i.email IS NULL OR 'email' = ANY(c.owner_fields))
      THEN 'skipped' ELSE 'updated' END,
    NULL
  FROM input i JOIN contacts c ON c.account_id = i.account_id AND c.phone = i.phone
  WHERE NOT EXISTS (SELECT 1 FROM upserted u WHERE u.account_id = i.account_id AND u.phone = i.phone)`;

export function contactQueries(db: Database) {
  return {
    /**
     * Creates or updates each entry's contact, with a new contact's `new_contact` event, and
     * returns each entry's result in order, a new contact's with its recorded event (`fired`,
     * for its job) when a subscription wants it. Distinct contacts share one statement (so one
     * round trip and one commit); a contact named twice is upserted again by the next statement,
     * in the order given. Concurrent upserts of a new phone meet on the unique (account_id,
     * phone): one inserts, the others update.
     */
    async upsert(entries: ContactToUpsert[], relayGraceMs: number): Promise<UpsertResult[]> {
      const rows = entries.map(({ accountId, input, source }) => {
        const id = randomUUID();
        const { name = null, email = null } = input.fields;
        const data = JSON.stringify({ contact_id: id, name: name ?? '', phone: input.phone, source });
        return { id, accountId, phone: input.phone, name, email, source, eventId: randomUUID(), data };
      });
      const results: UpsertResult[] = [];
      let waiting = rows.map((_, index) => index);
      while (waiting.length > 0) {
        const contacts = new Set<string>();
        const now: number[] = [];
        const later: number[] = [];
        for (const index of waiting) {
          const contact = `${rows[index]!.accountId}\n${rows[index]!.phone}`;
          (contacts.has(contact) ? later : now).push(index);
          contacts.add(contact);
        }
        const batch = now.map((index) => rows[index]!);
        const column = <T>(read: (row: (typeof rows)[number]) => T) => batch.map(read);
        const answered = await db.query<{ n: number; id: string; action: UpsertResult['action']; fired_at: string | null }>(UPSERT_DISTINCT, [
          column((row) => row.id),
          column((row) => row.accountId),
          column((row) => row.phone),
          column((row) => row.name),
          column((row) => row.email),
          column((row) => row.source),
          column((row) => row.eventId),
          column((row) => row.data),
          relayGraceMs,
        ]);
        for (const { n, id, action, fired_at } of answered.rows) {
          const index = now[n - 1]!;
          const row = rows[index]!;
          results[index] =
            action === 'inserted'
              ? {
                  action,
                  contactId: id,
                  ...(fired_at && { fired: { event_id: row.eventId, event: 'new_contact' as const, account_id: row.accountId, fired_at } }),
                }
              : action === 'skipped'
                ? { action, contactId: id, reason: 'owner_edited' }
                : { action, contactId: id };
        }
        // Unanswered: the contact was committed by another upsert after the statement's
        // snapshot; the next statement sees it.
        waiting = [...now.filter((index) => !results[index]), ...later].sort((a, b) => a - b);
      }
      return results;
    },

    async findIdByPhone(accountId: string, phone: string) {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM contacts WHERE account_id = $1 AND phone = $2', [accountId, phone]);
      return rows[0]?.id;
    },

    async get(accountId: string, contactId: string) {
      const { rows } = await db.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = $1 AND id = $2`, [accountId, contactId]);
      return rows[0] && toContact(rows[0]);
    },

    /** Applies an owner edit and marks its fields owner-held; undefined when the contact is not the account's. */
    async applyOwnerEdit(accountId: string, contactId: string, edit: OwnerEdit) {
      const fields = Object.keys(edit) as ContactField[];
      const { rows } = await db.query<ContactRow>(
        `UPDATE contacts SET
           name = CASE WHEN $3 THEN $4 ELSE name END,
           email = CASE WHEN $5 THEN $6 ELSE email END,
           owner_fields = ARRAY(SELECT DISTINCT unnest(owner_fields || $7::text[]) ORDER BY 1),
           updated_at = clock_timestamp()
         WHERE account_id = $1 AND id = $2 RETURNING ${CONTACT_COLUMNS}`,
        [accountId, contactId, 'name' in edit, edit.name ?? null, 'email' in edit, edit.email ?? null, fields],
      );
      return rows[0] && toContact(rows[0]);
    },
  };
}
