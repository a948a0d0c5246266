'use strict';

const authentication = require('./authentication');
const { befores, afters } = require('./middleware');
const triggers = require('./triggers');
const createOrUpdateContact = require('./creates/createOrUpdateContact');

module.exports = {
  version: require('./package.json').version,
  platformVersion: require('zapier-platform-core').version,

  authentication,
  beforeRequest: befores,
  afterResponse: afters,
  // Let afterResponse see 429s, so the ThrottledError says what was limited (core would
  // otherwise throw its own, generic one first).
  flags: { throwForThrottlingEarly: false },

  triggers,
  creates: { [createOrUpdateContact.key]: createOrUpdateContact },
};
