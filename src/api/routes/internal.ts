import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { SOURCE_SHAPE } from '../../domain/apiKey.js';
import { validateOwnerEdit, type StoredContact } from '../../domain/contact.js';
import { badRequest, notFound } from '../../domain/errors.js';
import { reportCall } from '../../services/calls.js';
import { upsertContact } from '../../services/contacts.js';
import type { ServiceDeps } from '../../services/deps.js';
import { issueApiKey, rotateApiKey } from '../../services/keys.js';
import { errorAnswers } from '../documentedErrors.js';
import { isUuid, toIso } from '../format.js';
import {
  accountParam,
  apiKey,
  callInput,
  callResult,
  contact,
  createdKey,
  keyInput,
  ok,
  ownerEditInput,
  rotatedKey,
  syncInput,
  upsertResult,
} from '../schemas.js';
import { z } from 'zod';

const contactParams = accountParam.extend({ contact_id: z.string() });
const keyParam = z.object({ key_id: z.string() });
const toContactBody = (c: StoredContact) => ({
  contact_id: c.id,
  phone: c.phone,
  name: c.name,
  email: c.email,
  source: c.source,
  owner_fields: c.ownerFields,
});

/** The platform's own systems: key management, owner edits, CRM syncs, call completion. */
export const internalRoutes =
  (deps: Omit<ServiceDeps, 'log'>): FastifyPluginAsyncZod =>
  async (app) => {
    const { store } = deps;

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
      async (request, reply) => {
        const created = await issueApiKey(store, request.params.account_id, request.body);
        return reply.status(201).send({ ...created, created_at: toIso(created.created_at) });
      },
    );

    const listKeys = { tags: ['keys'], summary: "An account's keys, without secrets", params: accountParam, response: { 200: z.object({ keys: z.array(apiKey) }) } };
    app.get('/accounts/:account_id/keys', { schema: listKeys }, async (request) => {
      const keys = await store.keys.listForAccount(request.params.account_id);
      return {
        keys: keys.map((key) => ({ ...key, created_at: toIso(key.created_at), revoked_at: key.revoked_at && toIso(key.revoked_at) })),
      };
    });

    const rotate = {
      tags: ['keys'],
      summary: 'Rotate a key: the same id gets a new secret (shown only here), the old one answers 401 at once; subscriptions are kept',
      params: keyParam,
      response: { 200: rotatedKey, ...errorAnswers('not_found') },
    };
    app.post('/keys/:key_id/rotate', { schema: rotate }, async (request) => {
      const rotated = isUuid(request.params.key_id) ? await rotateApiKey(store, request.params.key_id) : undefined;
      if (!rotated) throw notFound();
      return { ...rotated, created_at: toIso(rotated.created_at) };
    });

    const revoke = {
      tags: ['keys'],
      summary: 'Revoke a key: it answers 401 at once, and its subscriptions are deleted',
      params: keyParam,
      response: { 200: ok, ...errorAnswers('not_found') },
    };
    app.delete('/keys/:key_id', { schema: revoke }, async (request) => {
      const revoked = isUuid(request.params.key_id) && (await store.keys.revoke(request.params.key_id));
      if (!revoked) throw notFound();
      return { ok: true as const };
    });

    const getContact = { tags: ['contacts'], summary: 'A contact', params: contactParams, response: { 200: contact, ...errorAnswers('not_found') } };
    app.get('/accounts/:account_id/contacts/:contact_id', { schema: getContact }, async (request) => {
      const { account_id, contact_id } = request.params;
      const found = isUuid(contact_id) ? await store.contacts.get(account_id, contact_id) : undefined;
      if (!found) throw notFound();
      return toContactBody(found);
    });

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
      async (request) => {
        const { account_id, contact_id } = request.params;
        const edit = validateOwnerEdit(request.body);
        const edited = isUuid(contact_id) ? await store.contacts.applyOwnerEdit(account_id, contact_id, edit) : undefined;
        if (!edited) throw notFound();
        return toContactBody(edited);
      },
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
      async (request) => {
        const { source, ...input } = request.body;
        if (!SOURCE_SHAPE.test(source)) throw badRequest('invalid_source');
        return upsertContact({ ...deps, log: request.log }, request.params.account_id, source, input);
      },
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
      async (request, reply) => {
        const result = await reportCall({ ...deps, log: request.log }, request.params.account_id, request.body);
        return reply.status(202).send(result);
      },
    );
  };

