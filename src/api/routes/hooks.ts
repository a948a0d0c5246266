import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { conflict, notFound, unauthorized } from '../../domain/errors.js';
import { validateEventType, validateTargetUrl } from '../../domain/hooks.js';
import { secretForStorage } from '../../domain/secretBox.js';
import { newSigningSecret } from '../../domain/signature.js';
import type { Store } from '../../storage/store.js';
import { createdHook, deliveryList, errorBody, hookList, idParam, ok, subscribeInput } from '../schemas.js';
import { isUuid, toIso } from '../format.js';

const DELIVERY_LOG_LIMIT = 100;

export const hookRoutes =
  (store: Store, maxHooksPerKey: number, secretsKey: Buffer | undefined): FastifyPluginAsyncZod =>
  async (app) => {
    const hookOfCaller = async (keyId: string, id: string) => {
      const hook = isUuid(id) ? await store.hooks.findForKey(keyId, id) : undefined;
      if (!hook) throw notFound();
      return hook;
    };

    app.post(
      '/hooks',
      {
        schema: {
          summary: 'Subscribe an https URL to an event (REST Hooks)',
          body: subscribeInput,
          response: { 201: createdHook, 400: errorBody, 401: errorBody, 409: errorBody },
        },
      },
      async (request, reply) => {
        const eventType = validateEventType(request.body.event);
        const targetUrl = validateTargetUrl(request.body.target_url);
        const secret = newSigningSecret();
        const maxPerSecond = request.body.max_per_second ?? null;
        // Shown once, here; stored sealed when SECRETS_KEY is set.
        const stored = { eventType, targetUrl, maxPerSecond, secret: secretForStorage(secret, secretsKey) };
        const created = await store.hooks.create(request.caller, stored, maxHooksPerKey);
        // The key was revoked after this request's key check: as if it had been revoked before.
        if (created.outcome === 'key_revoked') throw unauthorized();
        if (created.outcome === 'limit_reached') throw conflict('hook_limit_reached');
        const { hook } = created;
        return reply.status(201).send({ ...hook, created_at: toIso(hook.created_at), secret });
      },
    );

    app.get(
      '/hooks',
      { schema: { summary: "The calling key's subscriptions, oldest first", response: { 200: hookList, 401: errorBody } } },
      async (request) => {
        const hooks = await store.hooks.listForKey(request.caller.keyId);
        return { hooks: hooks.map((hook) => ({ ...hook, created_at: toIso(hook.created_at) })) };
      },
    );

    app.delete(
      '/hooks/:id',
      { schema: { summary: 'Unsubscribe', params: idParam, response: { 200: ok, 401: errorBody, 404: errorBody } } },
      async (request) => {
        const deleted = isUuid(request.params.id) && (await store.hooks.deleteForKey(request.caller.keyId, request.params.id));
        if (!deleted) throw notFound();
        return { ok: true as const };
      },
    );

    app.get(
      '/hooks/:id/deliveries',
      {
        schema: {
          summary: "Latest delivery attempts of one of the calling key's subscriptions, newest first",
          params: idParam,
          response: { 200: deliveryList, 401: errorBody, 404: errorBody },
        },
      },
      async (request) => {
        const hook = await hookOfCaller(request.caller.keyId, request.params.id);
        const deliveries = await store.deliveries.listForHook(hook.id, DELIVERY_LOG_LIMIT);
        return {
          deliveries: deliveries.map((delivery) => ({
            ...delivery,
            queued_at: toIso(delivery.queued_at),
            attempted_at: delivery.attempted_at && toIso(delivery.attempted_at),
          })),
        };
      },
    );
  };
