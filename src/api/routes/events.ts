import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { validateEventType } from '../../domain/hooks.js';
import type { Store } from '../../storage/store.js';
import { errorBody, eventList, eventsQuery } from '../schemas.js';
import { toIso } from '../format.js';

export const eventRoutes =
  (store: Store): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/events',
      {
        schema: {
          summary: "Recent events of the calling key's account, newest first (sample data for trigger setup)",
          querystring: eventsQuery,
          response: { 200: eventList, 400: errorBody, 401: errorBody },
        },
      },
      async (request) => {
        const type = validateEventType(request.query.event);
        const events = await store.events.listRecent(request.caller.accountId, type, request.query.limit);
        return {
          events: events.map((event) => ({ id: event.id, event: event.event_type, data: event.data, created_at: toIso(event.created_at) })),
        };
      },
    );
  };
