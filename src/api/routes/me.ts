import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { errorBody, identity } from '../schemas.js';
import { toIso } from '../format.js';

/** "Who am I": what an integration shows as its connection label, and its auth test. */
export const meRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/me',
    { schema: { summary: 'The account and key this API key acts as (never the secret)', response: { 200: identity, 401: errorBody } } },
    async (request) => {
      const { accountId, keyId, source, name, createdAt } = request.caller;
      return { account_id: accountId, key: { id: keyId, source, name, created_at: toIso(createdAt) } };
    },
  );
};
