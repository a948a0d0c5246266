import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services/index.js';
import { errorAnswers } from '../documentedErrors.js';
import { DELIVERY_LOG_ERRORS, deliveryLogDescription, exampleDeliveryPage, exampleHookWithHealth, HOOK_STATE_RULE } from '../hookDocs.js';
import { createdHook, deliveryList, deliveryLogQuery, hookList, hookWithHealth, idParam, ok, subscribeInput } from '../schemas.js';

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
          summary: "The calling key's subscriptions, oldest first, with their state and health",
          description: `Unpaged: a key holds at most MAX_HOOKS_PER_KEY subscriptions (100 by default). Secrets are not shown. ${HOOK_STATE_RULE}`,
          response: { 200: hookList.meta({ description: 'The subscriptions', examples: [{ hooks: [exampleHookWithHealth] }] }) },
        },
      },
      async (request) => services.hooks.list(request.caller),
    );

    app.get(
      '/hooks/:id',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'getSubscription',
          summary: "One of the calling key's subscriptions, with its state and health",
          description: HOOK_STATE_RULE,
          params: idParam,
          response: { 200: hookWithHealth.meta({ description: 'The subscription', examples: [exampleHookWithHealth] }), ...errorAnswers('not_found') },
        },
      },
      async (request) => services.hooks.get(request.caller, request.params.id),
    );

    app.post(
      '/hooks/:id/enable',
      {
        schema: {
          tags: ['subscriptions'],
          operationId: 'enableSubscription',
          summary: 'Enable a subscription: its events are delivered again, and its failure streak starts over',
          description: `${HOOK_STATE_RULE} Enabling an active subscription only restarts its streak.`,
          params: idParam,
          response: {
            200: hookWithHealth.meta({ description: 'The subscription, active', examples: [{ ...exampleHookWithHealth, state: 'active' }] }),
            ...errorAnswers('not_found'),
          },
        },
      },
      async (request) => services.hooks.enable(request.caller, request.params.id),
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
          summary: "The delivery log of one of the calling key's subscriptions, newest first, paged and filtered",
          description: deliveryLogDescription,
          params: idParam,
          querystring: deliveryLogQuery,
          response: {
            200: deliveryList.meta({ description: 'A page of the log', examples: [exampleDeliveryPage] }),
            ...errorAnswers(...DELIVERY_LOG_ERRORS, 'not_found'),
          },
        },
      },
      async (request) => services.hooks.deliveries(request.caller, request.params.id, request.query),
    );
  };
