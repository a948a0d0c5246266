import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { app, type FieldDefinition } from './support.js';

/**
 * Offline: the app definition against zapier-platform-schema, through the same local `validate`
 * command that `zapier-platform validate` (and build, push) runs, with no network.
 */
const require = createRequire(import.meta.url);
const { createAppHandler } = require('zapier-platform-core') as {
  createAppHandler: (app: object) => (event: object) => Promise<{ results: { property: string; message: string }[] }>;
};
const validate = async (definition: object) => (await createAppHandler(definition)({ command: 'validate', calledFromCli: true })).results;

describe('the Zapier app definition', () => {
  it('is structurally valid for zapier-platform-schema', async () => {
    expect(await validate(app)).toStrictEqual([]);
  });

  it('fails validation when a trigger loses its description or the API key is marked not secret', async () => {
    const { new_contact: trigger } = app.triggers;
    const broken = {
      ...app,
      authentication: { ...app.authentication, fields: [{ key: 'api_key', label: 'API Key', required: true, isNoSecret: true }] },
      triggers: { ...app.triggers, new_contact: { ...trigger, display: { label: 'New Contact' } } },
    };
    expect((await validate(broken)).map((error) => `${error.property}: ${error.message}`).sort()).toStrictEqual([
      'instance.authentication.fields[0]: cannot set isNoSecret as true for the sensitive key "api_key".',
      'instance.triggers.new_contact.display: visible actions must have a label and description',
    ]);
  });

  // Samples are checked by Zapier's servers at push time, not by the local validator: check them here.
  it('declares the three REST hook triggers and the action, each with labelled output fields matching its sample', () => {
    const described: [string, { sample: Record<string, unknown>; outputFields: FieldDefinition[] }][] = [
      ...Object.entries(app.triggers).map(([key, trigger]) => [key, trigger.operation] as [string, typeof trigger.operation]),
      ['create_or_update_contact', app.creates.create_or_update_contact.operation],
    ];
    expect(described.map(([key]) => key)).toStrictEqual(['new_conversation', 'missed_call', 'new_contact', 'create_or_update_contact']);
    for (const [key, operation] of described) {
      expect(
        operation.outputFields.map((field) => field.key),
        key,
      ).toStrictEqual(Object.keys(operation.sample));
      for (const field of operation.outputFields) expect(field.label, `${key}.${field.key}`).toMatch(/\w/);
    }
    for (const trigger of Object.values(app.triggers)) expect(trigger.operation).toMatchObject({ type: 'hook' });
  });
});
