import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services/index.js';
import { identity } from '../schemas.js';

/** "Who am I": what an integration shows as its connection label, and its auth test. */
export const meRoutes =
  (services: Services): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/me',
      {
        schema: {
          tags: ['identity'],
          operationId: 'whoAmI',
          summary: 'The account and key this API key acts as (never the secret)',
          description: 'An integration’s auth test and connection label.',
          response: {
            200: identity.meta({
              description: 'The caller',
              examples: [
                {
                  account_id: 'acme',
                  key: { id: '6d1b2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', source: 'zapier', name: 'Zapier (Ann)', created_at: '2026-11-02T09:30:00.000Z' },
                },
              ],
            }),
          },
        },
      },
      async (request) => services.keys.me(request.caller),
    );
  };
