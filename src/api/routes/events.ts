import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services/index.js';
import { errorAnswers } from '../documentedErrors.js';
import { eventList, eventsQuery } from '../schemas.js';
import { WEBHOOK_EVENTS } from '../webhooks.js';

export const eventRoutes =
  (services: Services): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/events',
      {
        schema: {
          tags: ['events'],
          operationId: 'listRecentEvents',
          summary: "Recent events of the calling key's account, newest first (sample data for trigger setup)",
          description: 'Each item’s `data` is exactly what that event’s delivery carries (see Webhooks).',
          querystring: eventsQuery,
          response: {
            200: eventList.meta({
              description: 'The events, newest first',
              examples: [
                {
                  events: [
                    {
                      id: '0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b',
                      event: 'new_contact',
                      data: WEBHOOK_EVENTS.new_contact.example.data,
                      created_at: '2026-11-23T12:00:00.000Z',
                    },
                  ],
                },
              ],
            }),
            ...errorAnswers('invalid_event'),
          },
        },
      },
      async (request) => services.events.recent(request.caller, request.query.event, request.query.limit),
    );
  };
