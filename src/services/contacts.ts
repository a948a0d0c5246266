import { validateSource } from '../domain/apiKey.js';
import { validateContact, validateOwnerEdit, type ContactInput, type OwnerEdit, type SkipReason, type StoredContact } from '../domain/contact.js';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Caller } from '../domain/apiKey.js';
import type { UseCaseDeps } from './types.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { groupCommit } from '../storage/groupCommit.js';
import type { ContactToUpsert } from '../storage/contacts.js';

export interface UpsertAnswer {
  action: 'inserted' | 'updated' | 'skipped';
  contact_id: string | null;
  reason?: SkipReason;
}

/** A contact as the first-party API shows it. */
const shown = (contact: StoredContact) => ({
  contact_id: contact.id,
  phone: contact.phone,
  name: contact.name,
  email: contact.email,
  source: contact.source,
  owner_fields: contact.ownerFields,
});

/** Contacts: the one upsert (public API and CRM sync alike), reading one, and owner edits. */
export function contactServices(deps: UseCaseDeps) {
  const { store, config } = deps;
  // Upserts made at the same time share one statement and one commit, which records a new
  // contact's event too; the jobs of those someone subscribed to are added once committed.
  const upserted = groupCommit(async (entries: ContactToUpsert[]) => {
    const results = await store.contacts.upsert(entries, RELAY_GRACE_MS);
    deps.enqueue(results.flatMap((result) => (result.action === 'inserted' && result.fired ? [result.fired] : [])));
    return results;
  });

  /**
   * The one upsert path: the public API (source = the key's label) and every CRM sync (source =
   * the CRM) come through here, so owner edits and matching hold the same for both.
   */
  async function upsert(accountId: string, source: string, input: ContactInput): Promise<UpsertAnswer> {
    const valid = validateContact(input, config.DEFAULT_COUNTRY);
    if ('skip' in valid) {
      // The phone may still match a contact; say which, so the caller can link to it.
      const contactId = valid.phone ? await store.contacts.findIdByPhone(accountId, valid.phone) : undefined;
      return { action: 'skipped', contact_id: contactId ?? null, reason: valid.skip };
    }
    const result = await upserted.submit({ accountId, input: valid, source });
    return result.action === 'skipped'
      ? { action: 'skipped', contact_id: result.contactId, reason: result.reason }
      : { action: result.action, contact_id: result.contactId };
  }

  return {
    /** An integration's upsert: its key's account, its key's label as the source. */
    upsert: (caller: Caller, input: ContactInput) => upsert(caller.accountId, caller.source, input),

    /** A connected CRM's sync into an account, the CRM as the source. */
    sync: (accountId: string, input: ContactInput & { source: string }) => {
      const { source, ...contact } = input;
      return upsert(accountId, validateSource(source), contact);
    },

    async get(accountId: string, contactId: string) {
      const found = isUuid(contactId) ? await store.contacts.get(accountId, contactId) : undefined;
      if (!found) throw new NotFoundError();
      return shown(found);
    },

    /** The owner's edit: the fields sent become owner-held (null clears one and holds it empty). */
    async ownerEdit(accountId: string, contactId: string, edit: OwnerEdit) {
      const valid = validateOwnerEdit(edit);
      const edited = isUuid(contactId) ? await store.contacts.applyOwnerEdit(accountId, contactId, valid) : undefined;
      if (!edited) throw new NotFoundError();
      return shown(edited);
    },
  };
}
