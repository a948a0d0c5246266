import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import { EVENT_TYPES } from '../../domain/events.js';
import type { Services } from '../../services/index.js';
import type { PortalSession } from '../../services/portal.js';
import { classify } from '../errors.js';
import { catalogPage } from './catalogPage.js';
import { deliveryPage } from './deliveryPage.js';
import { homePage } from './homePage.js';
import { hookPage, LOG_RANGES } from './hookPage.js';
import type { Html } from './html.js';
import { rotatedPage, revokeConfirmPage, unsubscribeConfirmPage } from './keyPages.js';
import { doneMessage } from './layout.js';
import { messagePage } from './messagePage.js';
import { checkCsrf, portalHeaders, sessionCookie, setSessionCookie } from './security.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every portal page and write by the session hook below. */
    portalSession?: PortalSession;
  }
}

/** The portal's own files: read once, served with the rest of the portal's headers. */
const ASSETS = {
  'portal.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./assets/portal.css', import.meta.url)) },
  'portal.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('./assets/portal.js', import.meta.url)) },
};

/** Forms are small: a CSRF token and nothing else. */
const FORM_LIMIT = 4 * 1024;

const hide = { hide: true } as const;
const hookParams = z.object({ hook_id: z.string() });
const keyParams = z.object({ key_id: z.string() });
const doneQuery = z.object({ done: z.string().optional() });
const logQuery = doneQuery.extend({
  status: z.string().optional(),
  event: z.enum(EVENT_TYPES).or(z.literal('')).optional(),
  range: z
    .enum(Object.keys(LOG_RANGES) as [keyof typeof LOG_RANGES])
    .or(z.literal(''))
    .optional(),
  cursor: z.string().optional(),
  limit: z.string().optional(),
});

/** Rows a page of a hook's log shows unless the link asks for another number (up to the API's 100). */
const LOG_PAGE_ROWS = '25';

const sendPage = (reply: FastifyReply, page: Html, status = 200) => reply.status(status).type('text/html; charset=utf-8').send(page.text);
const session = (request: FastifyRequest) => request.portalSession!;

/**
 * The owner's portal, server-rendered, under /portal: a link opens a session, whose pages show
 * the account's keys, subscriptions, logs and event catalog, and (with `manage`) change them.
 * Every route is one call to the portal's use cases (src/services/portal.ts) and one page.
 */
export const portalRoutes =
  (services: Services, config: Pick<Config, 'PORTAL_FRAME_ANCESTORS' | 'PUBLIC_BASE_URL'>): FastifyPluginAsyncZod =>
  async (portal) => {
    const headers = portalHeaders(config.PORTAL_FRAME_ANCESTORS);
    portal.addHook('onSend', async (_request, reply) => void reply.headers(headers));
    portal.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    // Refusals are pages here, with the status and code the API's one table gives them.
    portal.setErrorHandler((error: FastifyError | Error, request, reply) => {
      const { status, code } = classify(error);
      if (status >= 500) request.log.error({ err: error }, 'portal request failed');
      return sendPage(reply, messagePage(status, code, request.portalSession), status);
    });
    portal.setNotFoundHandler((request, reply) => sendPage(reply, messagePage(404, 'not_found', request.portalSession), 404));

    portal.get(
      '/assets/:file',
      { schema: { ...hide, params: z.object({ file: z.enum(Object.keys(ASSETS) as [keyof typeof ASSETS]) }) } },
      async (request, reply) => {
        const asset = ASSETS[request.params.file];
        return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
      },
    );

    // The link: exchanged once for the session's cookie, then the portal's home. GET only: a
    // HEAD (a link checker's) must not spend it.
    const secure = config.PUBLIC_BASE_URL?.startsWith('https:') ?? false;
    const openLink = { exposeHeadRoute: false, schema: { ...hide, params: z.object({ token: z.string() }) } };
    portal.get('/open/:token', openLink, async (request, reply) => {
      const opened = await services.portal.open(request.params.token);
      setSessionCookie(reply, opened.sessionToken, opened.expiresAt, secure || request.protocol === 'https');
      return reply.redirect('/portal', 303);
    });

    await portal.register(async (scope) => {
      const pages = scope.withTypeProvider<ZodTypeProvider>();
      pages.addHook('onRequest', async (request) => {
        request.portalSession = await services.portal.authenticate(sessionCookie(request));
      });
      pages.addHook('preHandler', async (request) => {
        if (request.method === 'POST') checkCsrf(request.body, session(request).csrfToken);
      });

      pages.get('/', { schema: { ...hide, querystring: doneQuery } }, async (request, reply) =>
        sendPage(reply, homePage(session(request), await services.portal.home(session(request)), doneMessage(request.query.done))),
      );
      pages.get('/events', { schema: hide }, async (request, reply) => sendPage(reply, catalogPage(session(request))));

      pages.get('/hooks/:hook_id', { schema: { ...hide, params: hookParams, querystring: logQuery } }, async (request, reply) => {
        const { done, status, event, range, cursor, limit = LOG_PAGE_ROWS } = request.query;
        const since = range ? new Date(Date.now() - LOG_RANGES[range]).toISOString() : undefined;
        const filters = { status: status || undefined, event: event || undefined, since, cursor, limit };
        const view = await services.portal.hook(session(request), request.params.hook_id, filters);
        return sendPage(reply, hookPage(session(request), view, { status, event, range, limit: request.query.limit }, doneMessage(done)));
      });
      pages.get('/deliveries/:delivery_id', { schema: { ...hide, params: z.object({ delivery_id: z.string() }) } }, async (request, reply) =>
        sendPage(reply, deliveryPage(session(request), await services.portal.delivery(session(request), request.params.delivery_id))),
      );

      // Writes (manage): each answers with the page that shows its result.
      pages.post('/hooks/:hook_id/enable', { schema: { ...hide, params: hookParams } }, async (request, reply) => {
        const hook = await services.portal.enableHook(session(request), request.params.hook_id);
        return reply.redirect(`/portal/hooks/${hook.id}?done=enabled`, 303);
      });
      pages.post('/hooks/:hook_id/test', { schema: { ...hide, params: hookParams } }, async (request, reply) => {
        await services.portal.sendTest(session(request), request.params.hook_id);
        return reply.redirect(`/portal/hooks/${request.params.hook_id}?done=test_sent`, 303);
      });
      pages.get('/hooks/:hook_id/unsubscribe', { schema: { ...hide, params: hookParams } }, async (request, reply) =>
        sendPage(reply, unsubscribeConfirmPage(session(request), await services.portal.hookToUnsubscribe(session(request), request.params.hook_id))),
      );
      pages.post('/hooks/:hook_id/unsubscribe', { schema: { ...hide, params: hookParams } }, async (request, reply) => {
        await services.portal.unsubscribe(session(request), request.params.hook_id);
        return reply.redirect('/portal?done=unsubscribed', 303);
      });
      pages.post('/keys/:key_id/rotate', { schema: { ...hide, params: keyParams } }, async (request, reply) =>
        sendPage(reply, rotatedPage(session(request), await services.portal.rotateKey(session(request), request.params.key_id))),
      );
      pages.get('/keys/:key_id/revoke', { schema: { ...hide, params: keyParams } }, async (request, reply) =>
        sendPage(reply, revokeConfirmPage(session(request), await services.portal.keyToRevoke(session(request), request.params.key_id))),
      );
      pages.post('/keys/:key_id/revoke', { schema: { ...hide, params: keyParams } }, async (request, reply) => {
        await services.portal.revokeKey(session(request), request.params.key_id);
        return reply.redirect('/portal?done=revoked', 303);
      });
    });
  };
