import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services/index.js';
import { errorAnswers } from '../documentedErrors.js';
import { DELIVERY_LOG_ERRORS, deliveryLogDescription, exampleDeliveryPage, exampleHookWithHealth, HOOK_STATE_RULE } from '../hookDocs.js';
import {
  accountDeliveryLogQuery,
  accountParam,
  apiKey,
  callInput,
  callResult,
  contact,
  createdKey,
  deliveryList,
  keyInput,
  ok,
  ownerEditInput,
  ownersHook,
  ownersHookList,
  portalSession,
  portalSessionInput,
  rotatedKey,
  syncInput,
  upsertResult,
} from '../schemas.js';
import { z } from 'zod';

const contactParams = accountParam.extend({ contact_id: z.string() });
const keyParam = z.object({ key_id: z.string() });
const hookParams = accountParam.extend({ hook_id: z.string() });
const exampleOwnersHook = { ...exampleHookWithHealth, key_id: '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c' };

/** The platform's own systems: key management, owner edits, CRM syncs, call completion, the owner's hooks and their log. */
export const internalRoutes =
  (services: Services): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/accounts/:account_id/keys',
      {
        schema: {
          tags: ['keys'],
          summary: 'Issue an API key for an account (the key is shown only here)',
          params: accountParam,
          body: keyInput,
          response: { 201: createdKey, ...errorAnswers('invalid_source', 'invalid_account', 'invalid_name') },
        },
      },
      async (request, reply) => reply.status(201).send(await services.keys.issue(request.params.account_id, request.body)),
    );

    const listKeys = {
      tags: ['keys'],
      summary: "An account's keys, without secrets",
      params: accountParam,
      response: { 200: z.object({ keys: z.array(apiKey) }) },
    };
    app.get('/accounts/:account_id/keys', { schema: listKeys }, async (request) => services.keys.list(request.params.account_id));

    const rotate = {
      tags: ['keys'],
      summary: 'Rotate a key: the same id gets a new secret (shown only here), the old one answers 401 at once; subscriptions are kept',
      params: keyParam,
      response: { 200: rotatedKey, ...errorAnswers('not_found') },
    };
    app.post('/keys/:key_id/rotate', { schema: rotate }, async (request) => services.keys.rotate(request.params.key_id));

    const revoke = {
      tags: ['keys'],
      summary: 'Revoke a key: it answers 401 at once, and its subscriptions are deleted',
      params: keyParam,
      response: { 200: ok, ...errorAnswers('not_found') },
    };
    app.delete('/keys/:key_id', { schema: revoke }, async (request) => services.keys.revoke(request.params.key_id));

    const getContact = { tags: ['contacts'], summary: 'A contact', params: contactParams, response: { 200: contact, ...errorAnswers('not_found') } };
    app.get('/accounts/:account_id/contacts/:contact_id', { schema: getContact }, async (request) =>
      services.contacts.get(request.params.account_id, request.params.contact_id),
    );

    app.patch(
      '/accounts/:account_id/contacts/:contact_id',
      {
        schema: {
          tags: ['contacts'],
          summary: 'Owner edit: the fields sent become owner-held, and win over every later upsert',
          params: contactParams,
          body: ownerEditInput,
          response: { 200: contact, ...errorAnswers('invalid_name', 'invalid_email', 'not_found') },
        },
      },
      async (request) => services.contacts.ownerEdit(request.params.account_id, request.params.contact_id, request.body),
    );

    app.post(
      '/accounts/:account_id/contacts/sync',
      {
        schema: {
          tags: ['contacts'],
          summary: 'CRM sync: the same upsert as the public API, with the CRM as source',
          params: accountParam,
          body: syncInput,
          response: { 200: upsertResult, ...errorAnswers('missing_phone', 'invalid_source') },
        },
      },
      async (request) => services.contacts.sync(request.params.account_id, request.body),
    );

    app.post(
      '/accounts/:account_id/calls',
      {
        schema: {
          tags: ['calls'],
          summary: 'Report a finished call; answers the events it fired (none when reported before)',
          params: accountParam,
          body: callInput,
          response: { 202: callResult, ...errorAnswers('invalid_caller_number') },
        },
      },
      async (request, reply) => reply.status(202).send(await services.calls.report(request.params.account_id, request.body)),
    );

    const listHooks = {
      tags: ['subscriptions'],
      summary: "The owner's view: every live subscription of the account, under any key, with its state and health",
      description: HOOK_STATE_RULE,
      params: accountParam,
      response: { 200: ownersHookList.meta({ examples: [{ hooks: [exampleOwnersHook] }] }) },
    };
    app.get('/accounts/:account_id/hooks', { schema: listHooks }, async (request) => services.hooks.listForOwner(request.params.account_id));

    const enableHook = {
      tags: ['subscriptions'],
      summary: "The owner enables a subscription of the account's: its events are delivered again, its failure streak starts over",
      params: hookParams,
      response: { 200: ownersHook.meta({ examples: [{ ...exampleOwnersHook, state: 'active' }] }), ...errorAnswers('not_found') },
    };
    app.post('/accounts/:account_id/hooks/:hook_id/enable', { schema: enableHook }, async (request) =>
      services.hooks.enableForOwner(request.params.account_id, request.params.hook_id),
    );

    const accountLog = {
      tags: ['subscriptions'],
      summary: "The account's delivery log across its subscriptions (deleted ones too), newest first, paged and filtered",
      description: `${deliveryLogDescription} \`hook_id\` keeps one subscription's.`,
      params: accountParam,
      querystring: accountDeliveryLogQuery,
      response: { 200: deliveryList.meta({ examples: [exampleDeliveryPage] }), ...errorAnswers(...DELIVERY_LOG_ERRORS, 'invalid_hook_id') },
    };
    app.get('/accounts/:account_id/deliveries', { schema: accountLog }, async (request) =>
      services.hooks.deliveriesForOwner(request.params.account_id, request.query),
    );

    const mintPortalSession = {
      tags: ['portal'],
      summary: "A single-use link to the owner's portal for the account, with the capabilities given",
      description:
        'Opening `url` once (in a browser, or as an iframe’s `src`) sets the session’s cookie and shows the portal; opened again, ' +
        'or after `expires_at`, it answers 410 with a page that says so. `read` shows the account’s keys, subscriptions, their ' +
        'health and delivery logs, and the event catalog; `manage` also enables, unsubscribes, rotates, revokes and sends test ' +
        'events. The link is made on PUBLIC_BASE_URL, or else on the origin this request came to.',
      params: accountParam,
      body: portalSessionInput.meta({ examples: [{ capabilities: ['read', 'manage'], expires_in: 3600 }] }),
      response: {
        201: portalSession.meta({
          examples: [{ url: 'https://hooks.example.com/portal/open/3q2-7wEXAMPLEtokenOnlyShownHereAndNeverStored0', expires_at: '2026-11-23T13:00:00.000Z' }],
        }),
        ...errorAnswers('invalid_capabilities', 'invalid_expires_in'),
      },
    };
    app.post('/accounts/:account_id/portal-sessions', { schema: mintPortalSession }, async (request, reply) =>
      reply.status(201).send(await services.portal.mint(request.params.account_id, request.body, `${request.protocol}://${request.host}`)),
    );

    const endPortalSessions = {
      tags: ['portal'],
      summary: 'End every portal session of the account at once, and every link not opened yet: their next request answers 401',
      params: accountParam,
      response: { 200: ok },
    };
    app.delete('/accounts/:account_id/portal-sessions', { schema: endPortalSessions }, async (request) =>
      services.portal.endSessions(request.params.account_id),
    );
  };
