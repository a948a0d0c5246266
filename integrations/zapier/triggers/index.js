'use strict';

const { restHookTrigger } = require('./restHook');

const conversationSample = {
  id: '6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f',
  conversation_id: '6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f',
  channel: 'voice',
  caller_name: 'Ann Lee',
  caller_number: '+14155550100',
  summary: 'Asked whether the Saturday appointment can move to 11am.',
};

const conversationFields = [
  { key: 'id', label: 'ID' },
  { key: 'conversation_id', label: 'Conversation ID' },
  { key: 'channel', label: 'Channel' },
  { key: 'caller_name', label: 'Caller Name' },
  { key: 'caller_number', label: 'Caller Number (E.164)' },
  { key: 'summary', label: 'Summary' },
];

const newConversation = restHookTrigger({
  event: 'new_conversation',
  idField: 'conversation_id',
  noun: 'Conversation',
  display: {
    label: 'New Conversation',
    description: 'Triggers when a voice call ends, answered or sent to voicemail (not spam, not an immediate hang-up).',
  },
  sample: conversationSample,
  outputFields: conversationFields,
});

const missedCall = restHookTrigger({
  event: 'missed_call',
  idField: 'conversation_id',
  noun: 'Missed Call',
  display: {
    label: 'New Missed Call',
    description: 'Triggers when a voice call goes to voicemail.',
  },
  sample: conversationSample,
  outputFields: conversationFields,
});

const newContact = restHookTrigger({
  event: 'new_contact',
  idField: 'contact_id',
  noun: 'Contact',
  display: {
    label: 'New Contact',
    description: 'Triggers when a contact is created: by a Zap, another integration, or a CRM sync (not on updates).',
  },
  sample: {
    id: '0b9e8d7c-6a5b-4c3d-9e2f-1a0b9c8d7e6f',
    contact_id: '0b9e8d7c-6a5b-4c3d-9e2f-1a0b9c8d7e6f',
    name: 'Ann Lee',
    phone: '+14155550100',
    source: 'zapier',
  },
  outputFields: [
    { key: 'id', label: 'ID' },
    { key: 'contact_id', label: 'Contact ID' },
    { key: 'name', label: 'Name' },
    { key: 'phone', label: 'Phone (E.164)' },
    { key: 'source', label: 'Source' },
  ],
});

module.exports = {
  [newConversation.key]: newConversation,
  [missedCall.key]: missedCall,
  [newContact.key]: newContact,
};
