import { validateContact, type ContactInput, type SkipReason } from '../domain/contact.js';
import type { ServiceDeps } from './deps.js';
import { publishEvents } from './publish.js';

export interface UpsertResponse {
  action: 'inserted' | 'updated' | 'skipped';
  contact_id: string | null;
  reason?: SkipReason;
}

/**
 * The one upsert path: the public API (source = the key's label) and every CRM sync (source =
 * the CRM) come through here, so owner edits and matching hold the same for both.
 */
export async function upsertContact(
  deps: ServiceDeps,
  accountId: string,
  source: string,
  input: ContactInput,
): Promise<UpsertResponse> {
  const valid = validateContact(input, deps.defaultCountry);
  if ('skip' in valid) {
    // The phone may still match a contact; say which, so the caller can link to it.
    const contactId = valid.phone ? await deps.store.contacts.findIdByPhone(accountId, valid.phone) : undefined;
    return { action: 'skipped', contact_id: contactId ?? null, reason: valid.skip };
  }
  const result = await deps.store.contacts.upsert(accountId, valid, source);
  await publishEvents(deps.queue, result.eventIds, deps.log);
  return result.action === 'skipped'
    ? { action: 'skipped', contact_id: result.contactId, reason: result.reason }
    : { action: result.action, contact_id: result.contactId };
}
