'use strict';

const { apiUrl } = require('../api');

/**
 * The service's upsert by phone. Its three answers are all successes: `inserted`, `updated`, and
 * `skipped` with a reason (an owner edited those fields, or the phone, name or email is not
 * usable); a skip is shown as an outcome for the next steps to filter on, not as an error, so
 * it never counts against the Zap.
 */
const perform = async (z, bundle) => {
  const { phone, name, email } = bundle.inputData;
  const response = await z.request({
    url: apiUrl(z, bundle, '/contacts'),
    method: 'POST',
    // Sent as the Zap gives them: the service trims, and never lets a blank name or email
    // overwrite a stored one.
    body: { phone, name, email },
  });
  const { action, contact_id: contactId, reason } = response.data;
  return { action, contact_id: contactId ?? null, reason: reason ?? null };
};

module.exports = {
  key: 'create_or_update_contact',
  noun: 'Contact',
  display: {
    label: 'Create or Update Contact',
    description: 'Creates a contact, or updates the one with the same phone number. Fields the business edited by hand are kept.',
  },
  operation: {
    inputFields: [
      {
        key: 'phone',
        label: 'Phone',
        type: 'string',
        required: true,
        helpText:
          "The contact is matched on this number. Any common format works: `+1 415 555 0100`, `(415) 555-0100`, `415.555.0100`. A number without a leading `+` is read in the server's default country (usually the US), so include `+` and the country code for other countries, e.g. `+44 20 7946 0958`. A number that cannot exist gives **skipped** with reason `invalid_phone`.",
      },
      { key: 'name', label: 'Name', type: 'string', required: false, helpText: 'Up to 256 characters. Left unchanged when empty.' },
      { key: 'email', label: 'Email', type: 'string', required: false, helpText: 'Left unchanged when empty.' },
    ],
    perform,
    sample: { action: 'inserted', contact_id: '0b9e8d7c-6a5b-4c3d-9e2f-1a0b9c8d7e6f', reason: null },
    outputFields: [
      { key: 'action', label: 'Action (inserted, updated or skipped)' },
      { key: 'contact_id', label: 'Contact ID' },
      {
        key: 'reason',
        label: 'Skip Reason (owner_edited, invalid_phone, invalid_name or invalid_email)',
      },
    ],
  },
};
