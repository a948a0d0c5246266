import { randomUUID } from 'node:crypto';
import type { ContactField, OwnerEdit, StoredContact, ValidContact } from '../domain/contact.js';
import type { Database } from './database.js';

export type UpsertResult =
  | { action: 'inserted'; contactId: string; eventIds: string[] }
  | { action: 'updated'; contactId: string; eventIds: [] }
  | { action: 'skipped'; contactId: string; reason: 'owner_edited'; eventIds: [] };

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

export function contactQueries(db: Database) {
  return {
    /**
     * Creates or updates the account's contact with this phone, in one statement (so atomically,
     * and in one round trip), with the new contact's `new_contact` event. On an existing contact,
     * the upsert rules of src/domain/contact.ts are applied to the row as it is at that instant,
     * under its lock, so an owner edit racing the upsert always wins: a field sent is written
     * unless the owner holds it; a field not sent is never blanked; when every field sent is
     * owner-held, nothing is written and the upsert is `skipped` (`owner_edited`). Concurrent
     * upserts of a new phone meet on the unique (account_id, phone): one inserts, the others update.
     */
    async upsert(accountId: string, input: ValidContact, source: string): Promise<UpsertResult> {
      const id = randomUUID();
      const eventId = randomUUID();
      const { name = null, email = null } = input.fields;
      const sent = Object.keys(input.fields);
      const data = JSON.stringify({ contact_id: id, name: name ?? '', phone: input.phone, source });
      for (;;) {
        const { rows } = await db.query<{ id: string; action: UpsertResult['action'] }>(
          `WITH upserted AS (
             INSERT INTO contacts AS c (id, account_id, phone, name, email, source) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (account_id, phone) DO UPDATE SET
               name = CASE WHEN 'name' = ANY(c.owner_fields) THEN c.name ELSE coalesce(EXCLUDED.name, c.name) END,
               email = CASE WHEN 'email' = ANY(c.owner_fields) THEN c.email ELSE coalesce(EXCLUDED.email, c.email) END,
               updated_at = clock_timestamp()
             -- Only when a field sent and not owner-held differs: an upsert that changes nothing writes nothing.
             WHERE (EXCLUDED.name IS NOT NULL AND NOT 'name' = ANY(c.owner_fields) AND EXCLUDED.name IS DISTINCT FROM c.name)
                OR (EXCLUDED.email IS NOT NULL AND NOT 'email' = ANY(c.owner_fields) AND EXCLUDED.email IS DISTINCT FROM c.email)
             RETURNING c.id, (c.xmax = 0) AS inserted),
           fired AS (INSERT INTO events (id, account_id, event_type, data) SELECT $7, $2, 'new_contact', $8 FROM upserted WHERE inserted)
           SELECT id, CASE WHEN inserted THEN 'inserted' ELSE 'updated' END AS action FROM upserted
           UNION ALL
           SELECT id, CASE WHEN cardinality($9::text[]) > 0 AND $9::text[] <@ owner_fields THEN 'skipped' ELSE 'updated' END
           FROM contacts WHERE account_id = $2 AND phone = $3 AND NOT EXISTS (SELECT 1 FROM upserted)`,
          [id, accountId, input.phone, name, email, source, eventId, data, sent],
        );
        const row = rows[0];
        // None: the contact was committed by another upsert after this statement's snapshot, and
        // nothing here changed it; the next try sees it.
        if (!row) continue;
        if (row.action === 'inserted') return { action: 'inserted', contactId: row.id, eventIds: [eventId] };
        if (row.action === 'skipped') return { action: 'skipped', contactId: row.id, reason: 'owner_edited', eventIds: [] };
        return { action: 'updated', contactId: row.id, eventIds: [] };
      }
    },

    async findIdByPhone(accountId: string, phone: string) {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM contacts WHERE account_id = $1 AND phone = $2', [
        accountId,
        phone,
      ]);
      return rows[0]?.id;
    },

    async get(accountId: string, contactId: string) {
      const { rows } = await db.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = $1 AND id = $2`, [
        accountId,
        contactId,
      ]);
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
