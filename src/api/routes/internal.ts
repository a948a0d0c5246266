import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { SOURCE_SHAPE } from '../../domain/apiKey.js';
import { validateOwnerEdit, type StoredContact } from '../../domain/contact.js';
import { badRequest, notFound } from '../../domain/errors.js';
import { reportCall } from '../../services/calls.js';
import { upsertContact } from '../../services/contacts.js';
import type { ServiceDeps } from '../../services/deps.js';
import { issueApiKey, rotateApiKey } from '../../services/keys.js';
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
      { schema: { params: accountParam, body: keyInput, response: { 201: createdKey } } },
      async (request, reply) => {
        const created = await issueApiKey(store, request.params.account_id, request.body);
        return reply.status(201).send({ ...created, created_at: toIso(created.created_at) });
      },
    );

    app.get('/accounts/:account_id/keys', { schema: { params: accountParam, response: { 200: z.object({ keys: z.array(apiKey) }) } } }, async (request) => {
      const keys = await store.keys.listForAccount(request.params.account_id);
      return {
        keys: keys.map((key) => ({ ...key, created_at: toIso(key.created_at), revoked_at: key.revoked_at && toIso(key.revoked_at) })),
      };
    });

    app.post('/keys/:key_id/rotate', { schema: { params: keyParam, response: { 200: rotatedKey } } }, async (request) => {
      const rotated = isUuid(request.params.key_id) ? await rotateApiKey(store, request.params.key_id) : undefined;
      if (!rotated) throw notFound();
      return { ...rotated, created_at: toIso(rotated.created_at) };
    });

    app.delete('/keys/:key_id', { schema: { params: keyParam, response: { 200: ok } } }, async (request) => {
      const revoked = isUuid(request.params.key_id) && (await store.keys.revoke(request.params.key_id));
      if (!revoked) throw notFound();
      return { ok: true as const };
    });

    app.get('/accounts/:account_id/contacts/:contact_id', { schema: { params: contactParams, response: { 200: contact } } }, async (request) => {
      const { account_id, contact_id } = request.params;
      const found = isUuid(contact_id) ? await store.contacts.get(account_id, contact_id) : undefined;
      if (!found) throw notFound();
      return toContactBody(found);
    });

    app.patch(
      '/accounts/:account_id/contacts/:contact_id',
      { schema: { params: contactParams, body: ownerEditInput, response: { 200: contact } } },
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
      { schema: { params: accountParam, body: syncInput, response: { 200: upsertResult } } },
      async (request) => {
        const { source, ...input } = request.body;
        if (!SOURCE_SHAPE.test(source)) throw badRequest('invalid_source');
        return upsertContact({ ...deps, log: request.log }, request.params.account_id, source, input);
      },
    );

    app.post(
      '/accounts/:account_id/calls',
      { schema: { params: accountParam, body: callInput, response: { 202: callResult } } },
      async (request, reply) => {
        const result = await reportCall({ ...deps, log: request.log }, request.params.account_id, request.body);
        return reply.status(202).send(result);
      },
    );
  };

