import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { upsertContact } from '../../services/contacts.js';
import type { ServiceDeps } from '../../services/deps.js';
import { contactInput, errorBody, upsertResult } from '../schemas.js';

export const contactRoutes =
  (deps: Omit<ServiceDeps, 'log'>): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/contacts',
      {
        schema: {
          summary: 'Create or update a contact, keyed by phone number',
          body: contactInput,
          response: { 200: upsertResult, 400: errorBody, 401: errorBody },
        },
      },
      async (request) =>
        upsertContact({ ...deps, log: request.log }, request.caller.accountId, request.caller.source, request.body),
    );
  };
