import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DELIVERY_LOG_LIMIT } from '../../services/hooks.js';
import type { Services } from '../../services/index.js';
import { errorAnswers } from '../documentedErrors.js';
import { createdHook, deliveryList, hookList, idParam, ok, subscribeInput } from '../schemas.js';

const HOOK_ID = '9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d';
const exampleHook = {
  id: HOOK_ID,
  event_type: 'new_contact',
  target_url: 'https://hooks.zapier.com/hooks/standard/123456/abcdef/',
  max_per_second: null,
  created_at: '2026-11-23T12:00:00.000Z',
};

export const hookRoutes =
  (services: Services): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/hooks',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'subscribe',
          summary: 'Subscribe an https URL to an event (REST Hooks)',
          description:
            'From now on, each event of that type in the key’s account is POSTed once to `target_url` (see Webhooks). Keep the ' +
            '`id` to unsubscribe, and the `secret` to verify signatures: it is shown only here.',
          body: subscribeInput.meta({ examples: [{ event: 'new_contact', target_url: exampleHook.target_url }] }),
          response: {
            201: createdHook.meta({
              description: 'The subscription, with its signing secret (shown only here)',
              examples: [{ ...exampleHook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
            }),
            ...errorAnswers('invalid_event', 'invalid_target_url', 'invalid_max_per_second', 'hook_limit_reached'),
          },
        },
      },
      async (request, reply) => reply.status(201).send(await services.hooks.subscribe(request.caller, request.body)),
    );

    app.get(
      '/hooks',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'listSubscriptions',
          summary: "The calling key's subscriptions, oldest first",
          description: 'Unpaged: a key holds at most MAX_HOOKS_PER_KEY subscriptions (100 by default). Secrets are not shown.',
          response: { 200: hookList.meta({ description: 'The subscriptions', examples: [{ hooks: [exampleHook] }] }) },
        },
      },
      async (request) => services.hooks.list(request.caller),
    );

    app.delete(
      '/hooks/:id',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'unsubscribe',
          summary: 'Unsubscribe',
          description: 'Takes effect at once: events that fire afterwards are not delivered to it.',
          params: idParam,
          response: { 200: ok.meta({ description: 'Unsubscribed', examples: [{ ok: true }] }), ...errorAnswers('not_found') },
        },
      },
      async (request) => services.hooks.unsubscribe(request.caller, request.params.id),
    );

    app.get(
      '/hooks/:id/deliveries',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'listDeliveries',
          summary: "Latest delivery attempts of one of the calling key's subscriptions, newest first",
          description: `At most ${DELIVERY_LOG_LIMIT}.`,
          params: idParam,
          response: {
            200: deliveryList.meta({
              description: 'The latest attempts',
              examples: [
                {
                  deliveries: [
                    {
                      event_id: '0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b',
                      event: 'new_contact',
                      status: 'delivered',
                      response_status: 200,
                      error: null,
                      duration_ms: 84,
                      queued_at: '2026-11-23T12:00:00.120Z',
                      attempted_at: '2026-11-23T12:00:00.135Z',
                    },
                  ],
                },
              ],
            }),
            ...errorAnswers('not_found'),
          },
        },
      },
      async (request) => services.hooks.deliveries(request.caller, request.params.id),
    );
  };
