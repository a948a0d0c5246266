'use strict';

const { apiUrl } = require('./api');
const { throwForServiceError } = require('./errors');

/**
 * The connection test asks the service who the key is. A refused key is reported here as a plain
 * error with a clear message: the connection does not exist yet, so there is nothing to mark
 * expired (that is for keys revoked later, see errors.js). A 404 here means the URL is wrong.
 */
const test = async (z, bundle) => {
  const response = await z.request({ url: apiUrl(z, bundle, '/me'), skipThrowForStatus: true });
  if (response.status === 401) {
    throw new z.errors.Error(
      'contact-hooks did not accept this API key: it is unknown or was revoked. Check the key, and that the server URL is the server that issued it.',
      'unauthorized',
      401,
    );
  }
  if (response.status === 404) {
    throw new z.errors.Error('There is no contact-hooks API at this server URL. Enter the address the API is served from, without /api/v1.', 'not_found', 404);
  }
  if (response.status >= 400) throwForServiceError(z, response);
  return response.data;
};

/** "acme (Marketing Zaps)": the account, and the key's name or else its source label. */
const connectionLabel = (z, bundle) => {
  const { account_id: accountId, key } = bundle.inputData;
  return `${accountId} (${key.name || key.source})`;
};

module.exports = {
  type: 'custom',
  fields: [
    {
      key: 'base_url',
      label: 'Server URL',
      type: 'string',
      required: true,
      isNoSecret: true,
      placeholder: 'https://hooks.example.com',
      helpText: 'The address of your contact-hooks server, without `/api/v1`. Your platform gives it to you with your API key.',
    },
    {
      key: 'api_key',
      label: 'API Key',
      type: 'password',
      required: true,
      helpText:
        'A key issued for your account; it starts with `chk_`. Your platform issues it (for an operator: `npx contact-hooks keys create --account <account> --source zapier`).',
    },
  ],
  test,
  connectionLabel,
};
