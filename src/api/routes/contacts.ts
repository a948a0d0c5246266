import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services/index.js';
import { errorAnswers } from '../documentedErrors.js';
import { contactInput, upsertResult } from '../schemas.js';

const CONTACT_ID = '3f2a9c4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';

export const contactRoutes =
  (services: Services): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/contacts',
      {
        schema: {
          tags: ['contacts'],
          operationId: 'upsertContact',
          summary: 'Create or update a contact, keyed by phone number',
          description:
            'Matches the account’s contact by phone (normalised to E.164) and updates it, or creates it and fires `new_contact`. ' +
            'Fields the business owner edited keep their value. A phone, name or email present but unusable makes the upsert ' +
            '`skipped` with a `reason`, writing nothing.',
          body: contactInput.meta({ examples: [{ phone: '+1 415 555 0100', name: 'Ann Lee', email: 'ann@example.com' }] }),
          response: {
            200: upsertResult.meta({
              description: 'What the upsert did',
              'x-examples': {
                inserted: { summary: 'A new contact; new_contact fired', value: { action: 'inserted', contact_id: CONTACT_ID } },
                updated: { summary: 'The contact with that phone, updated', value: { action: 'updated', contact_id: CONTACT_ID } },
                skipped: {
                  summary: 'Not written: the phone is not a possible number',
                  value: { action: 'skipped', contact_id: null, reason: 'invalid_phone' },
                },
              },
            }),
            ...errorAnswers('missing_phone'),
          },
        },
      },
      async (request) => services.contacts.upsert(request.caller, request.body),
    );
  };
