import { randomUUID } from 'node:crypto';
import { planUpdate, type ContactField, type OwnerEdit, type StoredContact, type ValidContact } from '../domain/contact.js';
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
  /**
   * Applies an upsert to the existing contact. No lock is held between the read and the write:
   * the UPDATE only lands if the owner-held fields are still those the plan was made against,
   * and an owner edit in between makes it plan again.
   */
  async function updateExisting(accountId: string, input: ValidContact): Promise<UpsertResult> {
    for (;;) {
      const { rows } = await db.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = $1 AND phone = $2`, [
        accountId,
        input.phone,
      ]);
      const existing = toContact(rows[0]!); // it made our insert conflict, and contacts are never deleted
      const plan = planUpdate(existing, input);
      if (plan.kind === 'skip') return { action: 'skipped', contactId: existing.id, reason: plan.reason, eventIds: [] };
      if (Object.keys(plan.changes).length === 0) return { action: 'updated', contactId: existing.id, eventIds: [] };
      const { rowCount } = await db.query(
        `UPDATE contacts SET name = coalesce($2, name), email = coalesce($3, email), updated_at = clock_timestamp()
         WHERE id = $1 AND owner_fields = $4::text[]`,
        [existing.id, plan.changes.name ?? null, plan.changes.email ?? null, existing.ownerFields],
      );
      if (rowCount > 0) return { action: 'updated', contactId: existing.id, eventIds: [] };
    }
  }

  return {
    /**
     * Creates or updates the account's contact with this phone. A new contact and its
     * `new_contact` event are written by one statement, so atomically and in one round trip.
     * Concurrent upserts of a new phone meet on the unique (account_id, phone): one inserts,
     * the others find its row and update.
     */
    async upsert(accountId: string, input: ValidContact, source: string): Promise<UpsertResult> {
      const id = randomUUID();
      const eventId = randomUUID();
      const data = { contact_id: id, name: input.fields.name ?? '', phone: input.phone, source };
      const inserted = await db.query(
        `WITH created AS (
           INSERT INTO contacts (id, account_id, phone, name, email, source) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (account_id, phone) DO NOTHING RETURNING id)
         INSERT INTO events (id, account_id, event_type, data) SELECT $7, $2, 'new_contact', $8 FROM created`,
        [id, accountId, input.phone, input.fields.name ?? null, input.fields.email ?? null, source, eventId, JSON.stringify(data)],
      );
      if (inserted.rowCount > 0) return { action: 'inserted', contactId: id, eventIds: [eventId] };
      return updateExisting(accountId, input);
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
