import type { IAuthenticateGeneric, Icon, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * A connection to a contact-hooks server: its address and an API key of the account. Every
 * request carries the key as `Authorization: Bearer`, as the service's /api/v1 requires; the
 * test asks the service who the key is (`GET /api/v1/me`).
 */
export class ContactHooksApi implements ICredentialType {
  name = 'contactHooksApi';

  displayName = 'Contact Hooks API';

  icon: Icon = { light: 'file:../icons/contactHooks.svg', dark: 'file:../icons/contactHooks.dark.svg' };

  documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-contact-hooks';

  properties: INodeProperties[] = [
    {
      displayName: 'Server URL',
      name: 'baseUrl',
      type: 'string',
      default: '',
      placeholder: 'https://hooks.example.com',
      required: true,
      description: 'The address of your contact-hooks server, without /api/v1. Your platform gives it to you with your API key.',
    },
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      required: true,
      description: 'A key issued for your account; it starts with chk_',
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: { Authorization: '=Bearer {{$credentials.apiKey}}' },
    },
  };

  test: ICredentialTestRequest = {
    request: {
      baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
      url: '/api/v1/me',
    },
  };
}
