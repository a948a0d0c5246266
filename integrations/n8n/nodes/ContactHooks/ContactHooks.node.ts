import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { apiRequest, serviceError, type Answer } from '../shared/transport';

/**
 * contact-hooks' contact upsert (`POST /api/v1/contacts`), keyed by phone. Its three answers are
 * all successes: `inserted`, `updated`, and `skipped` with a reason (an owner edited those fields,
 * or the phone, name or email is not usable), so a later node can route on them.
 */
export class ContactHooks implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Contact Hooks',
    name: 'contactHooks',
    icon: { light: 'file:../../icons/contactHooks.svg', dark: 'file:../../icons/contactHooks.dark.svg' },
    group: ['output'],
    version: 1,
    subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
    description: 'Create or update contacts in contact-hooks',
    defaults: { name: 'Contact Hooks' },
    usableAsTool: true,
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'contactHooksApi', required: true }],
    properties: [
      {
        displayName: 'Resource',
        name: 'resource',
        type: 'options',
        noDataExpression: true,
        options: [{ name: 'Contact', value: 'contact' }],
        default: 'contact',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['contact'] } },
        options: [
          {
            name: 'Create or Update',
            value: 'upsert',
            description: 'Create a new record, or update the current one if it already exists (upsert)',
            action: 'Create or update a contact',
          },
        ],
        default: 'upsert',
      },
      {
        displayName: 'Phone',
        name: 'phone',
        type: 'string',
        required: true,
        default: '',
        placeholder: '+1 415 555 0100',
        description:
          "The contact is matched on this number. Any common format works. A number without a leading + is read in the server's default country (usually the US). A number that cannot exist gives action skipped with reason invalid_phone.",
        displayOptions: { show: { resource: ['contact'], operation: ['upsert'] } },
      },
      {
        displayName: 'Additional Fields',
        name: 'additionalFields',
        type: 'collection',
        placeholder: 'Add Field',
        default: {},
        displayOptions: { show: { resource: ['contact'], operation: ['upsert'] } },
        options: [
          {
            displayName: 'Email',
            name: 'email',
            type: 'string',
            placeholder: 'name@email.com',
            default: '',
            description: 'Left unchanged when empty',
          },
          {
            displayName: 'Name',
            name: 'name',
            type: 'string',
            default: '',
            description: 'Up to 256 characters. Left unchanged when empty.',
          },
        ],
      },
    ],
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const results: INodeExecutionData[] = [];
    for (let index = 0; index < items.length; index++) {
      const phone = this.getNodeParameter('phone', index) as string;
      const { name, email } = this.getNodeParameter('additionalFields', index) as { name?: string; email?: string };
      // Sent as given: the service trims, and never lets a blank name or email overwrite a stored one.
      let answer: Answer;
      try {
        answer = await apiRequest.call(this, 'POST', '/contacts', { body: { phone, name, email } });
      } catch (error) {
        // No answer at all (a wrong server URL, the server down).
        answer = { status: 0, body: { error: 'unreachable', message: (error as Error).message } };
      }
      if (answer.status !== 200) {
        const error = serviceError(this.getNode(), answer, index);
        if (!this.continueOnFail()) throw error;
        results.push({ json: { error: error.message, code: answer.body.error ?? null }, pairedItem: { item: index } });
        continue;
      }
      const { action, contact_id: contactId, reason } = answer.body;
      results.push({ json: { action, contact_id: contactId ?? null, reason: reason ?? null }, pairedItem: { item: index } });
    }
    return [results];
  }
}
