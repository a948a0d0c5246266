import rateLimit from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { RedisClient } from '../queue/redisConnection.js';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import type { Services } from '../services/index.js';
import { requireApiKey, requireInternalToken, requireOperator } from './auth.js';
import { documentScopeErrors } from './documentedErrors.js';
import { leasedRateLimitStore } from './rateLimitLeases.js';
import { clientErrorHandler, RateLimitedError, registerErrorHandling, routerErrors, ShuttingDownError } from './errors.js';
import { acceptJsonBodiesOnly } from './jsonBody.js';
import { internalDocs, publicDocs, registerOpenApi } from './openapi.js';
import { contactRoutes } from './routes/contacts.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { hookRoutes } from './routes/hooks.js';
import { internalRoutes } from './routes/internal.js';
import { meRoutes } from './routes/me.js';
import { portalRoutes } from './portal/routes.js';

export interface AppDeps {
  config: Config;
  /** Every use case; routes only translate HTTP to and from them. */
  services: Services;
  metrics?: Metrics;
  logger?: FastifyBaseLogger;
  /** Extra routes mounted behind the internal token, such as Bull Board at /admin/queues. */
  admin?: (app: FastifyInstance) => Promise<void>;
  /** Where the API rate limit counts, so that every web process shares it; absent: in this process's memory. */
  rateLimitRedis?: RedisClient;
}

const BODY_LIMIT = 64 * 1024;
/** An idle kept-alive connection is closed after this: a few seconds, not Fastify's 72. */
const IDLE_KEEP_ALIVE_MS = 5_000;

/**
 * Node enforces the request timeout only when it sweeps its connections, every
 * connectionsCheckingInterval (30 s by default, which would let a 30 s limit run to 60 s). A
 * tenth of the limit, at most a second, keeps the overrun small without sweeping constantly.
 */
const connectionsCheckingInterval = (requestTimeoutMs: number) => Math.max(10, Math.min(1_000, Math.floor(requestTimeoutMs / 10)));

/** The HTTP service. Infrastructure comes in, so tests choose the real parts they run against. */
export async function buildApp({ config, services, metrics = createMetrics(), logger, admin, rateLimitRedis }: AppDeps) {
  const app = Fastify({
    loggerInstance: logger,
    logger: logger ? undefined : { level: config.LOG_LEVEL },
    bodyLimit: BODY_LIMIT,
    // Slow clients: a request not complete within REQUEST_TIMEOUT_MS (headers included) gets 408.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: IDLE_KEEP_ALIVE_MS,
    http: {
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      headersTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: connectionsCheckingInterval(config.REQUEST_TIMEOUT_MS),
    },
    // Room for the longest account id accepted (128); a longer path segment names nothing we issue.
    routerOptions: { maxParamLength: 128 },
    clientErrorHandler,
    frameworkErrors: routerErrors((request, reply, route) => recordRequest(request, reply, route)),
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false, // answered below, in the service's own error shape
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);

  // While draining for shutdown, requests on kept-alive connections are turned away cleanly.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new ShuttingDownError();
  });

  acceptJsonBodiesOnly(app);

  // One log line per request; headers (and so keys) are never logged.
  const recordRequest = (request: FastifyRequest, reply: FastifyReply, route: string) => {
    metrics.httpDuration.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
    request.log.info({ method: request.method, route, status: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
  };
  app.addHook('onResponse', async (request, reply) => recordRequest(request, reply, request.routeOptions.url ?? 'unmatched'));

  await registerOpenApi(app);

  await app.register(
    async (api) => {
      api.addHook('onRoute', documentScopeErrors(['unauthorized', 'rate_limited', 'internal', 'unavailable']));
      api.addHook('onRequest', requireApiKey(services));
      // A key's "last used" is its last request that succeeded; noted before the answer leaves,
      // so a client that reads the key list next sees it.
      api.addHook('onSend', async (request, reply) => {
        if (reply.statusCode < 400) await services.keys.noteUse(request.caller);
      });
      await api.register(rateLimit, {
        max: config.RATE_LIMIT_PER_MINUTE,
        timeWindow: 60_000,
        keyGenerator: (request) => request.caller.keyId,
        // Shared through Redis, the limit holds however many web processes serve the key; each
        // process takes its requests from the count a lease at a time (./rateLimitLeases.ts). If
        // Redis does not answer, requests go through uncounted: the limit is for fairness, and the
        // API keeps answering without Redis, as it does for events (the outbox keeps them).
        ...(rateLimitRedis && { store: leasedRateLimitStore(rateLimitRedis, `${config.QUEUE_PREFIX}:rate-limit:`), skipOnError: true }),
        errorResponseBuilder: (_request, context) => new RateLimitedError(Math.ceil(context.ttl / 1000)),
      });
      await api.register(contactRoutes(services));
      await api.register(hookRoutes(services));
      await api.register(eventRoutes(services));
      await api.register(meRoutes(services));
    },
    { prefix: '/api/v1' },
  );

  // Without a token the first-party API is not mounted at all, so no method or path under it
  // (405, a bad path) gives away that it exists: everything there is a plain 404.
  if (config.INTERNAL_API_TOKEN) {
    await app.register(
      async (internal) => {
        internal.addHook('onRoute', documentScopeErrors(['unauthorized', 'internal', 'unavailable']));
        internal.addHook('onRequest', requireInternalToken(config.INTERNAL_API_TOKEN));
        await internal.register(internalRoutes(services));
        await internal.register(internalDocs);
      },
      { prefix: '/internal/v1' },
    );
  }

  if (admin) {
    await app.register(async (scope) => {
      scope.addHook('onRequest', requireOperator(config.INTERNAL_API_TOKEN));
      await admin(scope);
    });
  }

  await app.register(portalRoutes(services, config), { prefix: '/portal' });
  await app.register(healthRoutes({ services, metrics, token: config.INTERNAL_API_TOKEN }));
  await app.register(publicDocs);
  return app;
}
