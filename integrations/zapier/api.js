'use strict';

/**
 * Where the service lives. A self-hosted contact-hooks has its own address, so it comes from the
 * connection (`base_url`) rather than from the code; the public API sits under /api/v1 there.
 */
const apiUrl = (z, bundle, path) => {
  const base = String(bundle.authData.base_url || '')
    .trim()
    .replace(/\/+$/, '');
  let parsed;
  try {
    parsed = new URL(base);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new z.errors.Error(
      `The server URL "${base}" is not a web address. Enter the address of your contact-hooks server, such as https://hooks.example.com.`,
      'invalid_base_url',
      400,
    );
  }
  return `${base}/api/v1${path}`;
};

module.exports = { apiUrl };
