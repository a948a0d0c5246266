import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContactField } from '../../src/domain/contact.js';
import { testServices } from '../support/app.js';
import { engines, useTestStore, withPostgres } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const PHONES = ['+14155550101', '+14155550102', '+14155550103'];
const NAMES = [undefined, 'Ann', 'Bob'];
const EMAILS = [undefined, 'a@example.com', 'b@example.com'];

interface Upsert {
  account: number;
  phone: number;
  name: string | undefined;
  email: string | undefined;
}
interface ModelContact {
  name: string | null;
  email: string | null;
  held: ContactField[];
}

/** The upsert rules (src/domain/contact.ts) applied one at a time, in order: what a batch must equal. */
function applyInOrder(existing: Map<string, ModelContact>, upserts: Upsert[]) {
  const contacts = new Map([...existing].map(([key, contact]) => [key, { ...contact }]));
  const actions = upserts.map(({ account, phone, name, email }) => {
    const key = `${account}/${phone}`;
    const contact = contacts.get(key);
    if (!contact) {
      contacts.set(key, { name: name ?? null, email: email ?? null, held: [] });
      return 'inserted';
    }
    const sent = { name, email };
    const fields = (['name', 'email'] as const).filter((field) => sent[field] !== undefined);
    if (fields.length > 0 && fields.every((field) => contact.held.includes(field))) return 'skipped';
    for (const field of fields) if (!contact.held.includes(field)) contact[field] = sent[field]!;
    return 'updated';
  });
  return { actions, contacts };
}

/**
 * Upserts made at the same time share one statement and one commit (group commit, in
 * src/services/contacts.ts). Whatever arrives together, each upsert's answer and the stored
 * contacts must be those of the same upserts applied one by one in the order they were made: no
 * upsert lost, none applied twice, one new_contact per contact created, every answer its own.
 */
describe.each(engines())('upserts made at once on %s', (engine) => {
  const t = useTestStore(engine);

  it('answers and stores each as if applied alone, in order, with one new_contact per new contact', async () => {
    const upsert = fc.record({
      account: fc.nat(1),
      phone: fc.nat(PHONES.length - 1),
      name: fc.constantFrom(...NAMES),
      email: fc.constantFrom(...EMAILS),
    });
    // Contacts that exist before the batch, some fields held by their owner.
    const existing = fc.array(fc.record({ account: fc.nat(1), phone: fc.nat(PHONES.length - 1), held: fc.subarray(['name', 'email'] as ContactField[]) }), {
      maxLength: 4,
    });

    await fc.assert(
      fc.asyncProperty(existing, fc.array(upsert, { minLength: 1, maxLength: 30 }), async (before, upserts) => {
        const services = testServices(t.store);
        const accounts = [newAccount(), newAccount()];
        const sync = ({ account, phone, name, email }: Upsert) =>
          services.contacts.sync(accounts[account]!, { phone: PHONES[phone]!, name, email, source: 'crm' });
        const model = new Map<string, ModelContact>();
        for (const { account, phone, held } of before) {
          const key = `${account}/${phone}`;
          if (model.has(key)) continue;
          const { contact_id } = await sync({ account, phone, name: 'Old', email: 'old@example.com' });
          const owned = { name: held.includes('name') ? 'Owner' : 'Old', email: held.includes('email') ? 'owner@example.com' : 'old@example.com' };
          if (held.length > 0)
            await services.contacts.ownerEdit(accounts[account]!, contact_id!, Object.fromEntries(held.map((field) => [field, owned[field]])));
          model.set(key, { ...owned, held });
        }
        const eventsBefore = await newContactEvents(accounts);

        const answers = await Promise.all(upserts.map(sync));

        const expected = applyInOrder(model, upserts);
        expect(answers.map((answer) => answer.action)).toStrictEqual(expected.actions);
        const stored = await t.db.query<{ id: string; account_id: string; phone: string; name: string | null; email: string | null }>(
          'SELECT id::text, account_id, phone, name, email FROM contacts WHERE account_id = ANY($1::text[])',
          [accounts],
        );
        const storedByKey = new Map(stored.rows.map((row) => [`${accounts.indexOf(row.account_id)}/${PHONES.indexOf(row.phone)}`, row]));
        expect(new Map([...storedByKey].map(([key, row]) => [key, { name: row.name, email: row.email }]))).toStrictEqual(
          new Map([...expected.contacts].map(([key, contact]) => [key, { name: contact.name, email: contact.email }])),
        );
        // Each answer names its own contact.
        upserts.forEach(({ account, phone }, i) => expect(answers[i]!.contact_id).toBe(storedByKey.get(`${account}/${phone}`)!.id));
        // One new_contact per contact the batch created, for that contact.
        const created = (await newContactEvents(accounts)).filter((event) => !eventsBefore.some((old) => old.contact_id === event.contact_id));
        const inserted = answers.filter((answer) => answer.action === 'inserted').map((answer) => answer.contact_id);
        expect(created.map((event) => event.contact_id).sort()).toStrictEqual(inserted.sort());
      }),
      { numRuns: engine === 'pglite' ? 20 : 40 },
    );
  });

  async function newContactEvents(accounts: string[]) {
    const { rows } = await t.db.query<{ contact_id: string }>(
      "SELECT data->>'contact_id' AS contact_id FROM events WHERE event_type = 'new_contact' AND account_id = ANY($1::text[])",
      [accounts],
    );
    return rows;
  }
});

// PGlite has one connection: its statements never run at the same time.
describe.runIf(withPostgres)('upsert batches at once on postgres', () => {
  const t = useTestStore('postgres');

  it('never deadlocks two batches that name the same new contacts in opposite orders', async () => {
    for (let round = 0; round < 5; round++) {
      const accountId = newAccount();
      const phones = Array.from({ length: 400 }, (_, i) => `+1415556${String(i).padStart(4, '0')}`);
      // Two processes' group commits, each with the same contacts, one in the reverse order of the other.
      const [one, other] = [testServices(t.store), testServices(t.store)];
      const answers = await Promise.all([
        ...phones.map((phone) => one.contacts.sync(accountId, { phone, name: 'One', source: 'crm' })),
        ...[...phones].reverse().map((phone) => other.contacts.sync(accountId, { phone, name: 'Other', source: 'crm' })),
      ]);
      expect(answers.filter((answer) => answer.action === 'inserted')).toHaveLength(phones.length);
      expect(answers.filter((answer) => answer.action === 'updated')).toHaveLength(phones.length);
      const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE event_type = 'new_contact' AND account_id = $1", [
        accountId,
      ]);
      expect(rows[0]!.n).toBe(phones.length);
    }
  });
});
