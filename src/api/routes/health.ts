import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';
import type { Services } from '../../services/index.js';
import { requireInternalToken } from '../auth.js';

export const healthRoutes =
  ({ services, metrics, token }: { services: Services; metrics: Metrics; token: string | undefined }): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const { ready, storage, queue } = await services.readiness();
      return reply.status(ready ? 200 : 503).send({ ok: ready, storage, queue });
    });

    // Prometheus scrapes with the internal token as its bearer credentials; no token configured, no metrics here.
    app.get('/metrics', { schema: { hide: true }, onRequest: requireInternalToken(token) }, async (_request, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  };
