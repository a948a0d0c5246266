import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID } from '../../../test/support/http.js';
import { app, appError, rejection, run, startServiceAndReceiver, type ServiceAndReceiver } from './support.js';

/** The "Create or Update Contact" action against a real service process. */
describe('Zapier action Create or Update Contact against the service', () => {
  let env: ServiceAndReceiver;
  let authData: { base_url: string; api_key: string };
  const createOrUpdate = (inputData: Record<string, unknown>) =>
    run(app.creates.create_or_update_contact.operation.perform, { authData, inputData }) as Promise<Record<string, unknown>>;
  const stored = async (contactId: unknown) => (await env.http.internal('GET', `/accounts/acme/contacts/${String(contactId)}`)).body;

  beforeAll(async () => {
    env = await startServiceAndReceiver();
    ({ authData } = await env.connect('acme'));
  });
  afterAll(async () => {
    await env?.close();
  });

  it('inserts a new phone, with exactly the outputs the action declares', async () => {
    const result = await createOrUpdate({ phone: '+1 415 555 0170', name: 'Ann Lee', email: 'ann@example.com' });
    expect(result).toStrictEqual({ action: 'inserted', contact_id: expect.stringMatching(UUID), reason: null });
    expect(Object.keys(result)).toStrictEqual(Object.keys(app.creates.create_or_update_contact.operation.sample));
    expect(await stored(result.contact_id)).toMatchObject({ phone: '+14155550170', name: 'Ann Lee', email: 'ann@example.com', source: 'zapier' });
  });

  it('updates the contact with the same phone written another way, and leaves fields the Zap left empty', async () => {
    const inserted = await createOrUpdate({ phone: '+14155550171', name: 'Bo', email: 'bo@example.com' });
    const updated = await createOrUpdate({ phone: '(415) 555-0171', name: 'Bo Diaz', email: '' });
    expect(updated).toStrictEqual({ action: 'updated', contact_id: inserted.contact_id, reason: null });
    expect(await stored(inserted.contact_id)).toMatchObject({ name: 'Bo Diaz', email: 'bo@example.com' });
  });

  it('shows an upsert of owner-edited fields as skipped with reason owner_edited, not as an error', async () => {
    const inserted = await createOrUpdate({ phone: '+14155550172', name: 'Cy' });
    const edit = await env.http.internal('PATCH', `/accounts/acme/contacts/${String(inserted.contact_id)}`, { name: 'Cy (VIP)' });
    expect(edit.status).toBe(200);
    expect(await createOrUpdate({ phone: '+14155550172', name: 'Cyrus' })).toStrictEqual({
      action: 'skipped',
      contact_id: inserted.contact_id,
      reason: 'owner_edited',
    });
    expect(await stored(inserted.contact_id)).toMatchObject({ name: 'Cy (VIP)' });
  });

  it('shows an impossible phone as skipped with reason invalid_phone and no contact', async () => {
    expect(await createOrUpdate({ phone: '+1 555', name: 'Nobody' })).toStrictEqual({ action: 'skipped', contact_id: null, reason: 'invalid_phone' });
  });

  it('reports a missing phone as a readable error with the service code', async () => {
    const error = appError(await rejection(createOrUpdate({ name: 'No phone' })));
    expect(error).toStrictEqual({ message: 'A phone number is required: map one into the Phone field.', code: 'missing_phone', status: 400 });
  });
});
