import { describe, expect, it } from 'vitest';
import type { ValidContact } from '../../src/domain/contact.js';
import { engines, useTestStore, upsertContact } from '../support/databases.js';
import { newAccount } from '../support/http.js';

let phone = 4155560000;

/**
 * The upsert's rules on an existing contact (src/domain/contact.ts), applied by its one
 * statement: fields sent are written unless owner-held, fields not sent are kept, and an upsert
 * whose every field is owner-held is skipped.
 */
describe.each(engines())('the upsert rules on %s', (engine) => {
  const t = useTestStore(engine);

  /** A contact with a name and an email, the owner holding `held`; then `upsert`'s answer and the contact after. */
  async function upsertOnto(held: ('name' | 'email')[], fields: ValidContact['fields']) {
    const accountId = newAccount();
    const contact: ValidContact = { phone: `+1${phone++}`, fields: { name: 'Stored Name', email: 'stored@example.com' } };
    const created = await upsertContact(t.store, accountId, contact, 'zapier');
    expect(created.action).toBe('inserted');
    if (held.length > 0)
      await t.store.contacts.applyOwnerEdit(accountId, created.contactId, Object.fromEntries(held.map((field) => [field, `Owner ${field}`])));
    const answer = await upsertContact(t.store, accountId, { phone: contact.phone, fields }, 'hubspot');
    const after = await t.store.contacts.get(accountId, created.contactId);
    return { answer, after: { name: after?.name, email: after?.email, source: after?.source }, contactId: created.contactId };
  }

  it('updates every field sent when the owner holds none, and keeps the source that created it', async () => {
    const { answer, after, contactId } = await upsertOnto([], { name: 'New', email: 'new@example.com' });
    expect(answer).toStrictEqual({ action: 'updated', contactId });
    expect(after).toStrictEqual({ name: 'New', email: 'new@example.com', source: 'zapier' });
  });

  it('keeps an owner-held field and writes the others', async () => {
    const { answer, after } = await upsertOnto(['name'], { name: 'New', email: 'new@example.com' });
    expect(answer.action).toBe('updated');
    expect(after).toMatchObject({ name: 'Owner name', email: 'new@example.com' });
  });

  it('skips as owner_edited when every field sent is owner-held, writing nothing', async () => {
    for (const [held, fields] of [
      [['name'], { name: 'New' }],
      [['email', 'name'], { name: 'New', email: 'n@example.com' }],
    ] as const) {
      const { answer, after, contactId } = await upsertOnto([...held], fields);
      expect(answer).toStrictEqual({ action: 'skipped', contactId, reason: 'owner_edited' });
      expect(after).toMatchObject({ name: held.includes('name') ? 'Owner name' : 'Stored Name' });
    }
  });

  it('changes nothing, without skipping, when only the phone is sent, or the values sent are the stored ones', async () => {
    expect((await upsertOnto(['name', 'email'], {})).answer.action).toBe('updated');
    const same = await upsertOnto([], { name: 'Stored Name' });
    expect(same.answer.action).toBe('updated');
    expect(same.after).toMatchObject({ name: 'Stored Name', email: 'stored@example.com' });
  });

  it('never blanks a stored value with a field not sent', async () => {
    const { after } = await upsertOnto([], { email: 'new@example.com' });
    expect(after).toMatchObject({ name: 'Stored Name', email: 'new@example.com' });
  });
});
