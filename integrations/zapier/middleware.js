'use strict';

const { throwForServiceError } = require('./errors');

/** Every request carries the connection's API key as a Bearer token. */
const addApiKey = (request, z, bundle) => {
  if (bundle.authData && bundle.authData.api_key) {
    request.headers = { ...request.headers, Authorization: `Bearer ${bundle.authData.api_key}` };
  }
  return request;
};

/**
 * Maps the service's error answers to Zapier errors for every request, except those that asked
 * to look at the status themselves (`skipThrowForStatus`: the auth test and unsubscribe).
 */
const handleServiceErrors = (response, z) => {
  if (response.status < 400 || response.skipThrowForStatus) return response;
  return throwForServiceError(z, response);
};

module.exports = { befores: [addApiKey], afters: [handleServiceErrors] };
