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
          operationId: 'listEvents',
          summary: "The events feed: the calling key's account's events of a type, to poll or to show as samples",
          description:
            'Without `after`: the newest events, newest first (a trigger’s sample data), and a `next_cursor` to poll from. ' +
            'With `after`: the events after that cursor, oldest first; each event comes exactly once, in the same order for every reader, ' +
            'and appears once every database transaction that began before its own has ended. ' +
            'Events are kept RETENTION_DAYS (default 30); a cursor older than that answers 410 `cursor_expired`: read again without `after`. ' +
            'Test events sent from the owner’s portal are left out. Each item’s `data` is exactly what that event’s delivery carries (see Webhooks).',
          querystring: eventsQuery,
          response: {
            200: eventList.meta({
              description: 'The events (newest first without `after`, oldest first with it) and where to read on from',
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
                  next_cursor: 'NDg4MjF8MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwfDE3OTU0MzUyMDAwMDA',
                },
              ],
            }),
            ...errorAnswers('invalid_event', 'invalid_limit', 'invalid_cursor', 'cursor_expired'),
          },
        },
      },
      async (request) => services.events.feed(request.caller, request.query),
    );
  };
