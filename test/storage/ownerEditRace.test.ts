import { describe, expect, it } from 'vitest';
import { engines, useTestStore, upsertContact } from '../support/databases.js';

/**
 * The upsert holds no lock between reading a contact and writing it; an owner edit landing in
 * between must still win. Many upserts race one owner edit, round after round.
 */
describe.each(engines())('upsert racing an owner edit on %s', (engine) => {
  const t = useTestStore(engine);

  it('never overwrites a field the owner took while the upsert was planning', async () => {
    for (let round = 0; round < 30; round++) {
      const phone = `+1415555${String(round).padStart(4, '0')}`;
      const created = await upsertContact(t.store, 'acct', { phone, fields: { name: 'Initial' } }, 'api');
      const sync = (i: number) => upsertContact(t.store, 'acct', { phone, fields: { name: `Sync ${i}` } }, 'hubspot');
      await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => sync(i)),
        t.store.contacts.applyOwnerEdit('acct', created.contactId, { name: 'Owner' }),
        ...Array.from({ length: 8 }, (_, i) => sync(i + 8)),
      ]);
      expect((await t.store.contacts.get('acct', created.contactId))?.name).toBe('Owner');
    }
  });
});
