import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';
import type { JobQueue } from '../../queue/jobQueue.js';
import type { Store } from '../../storage/store.js';
import { requireInternalToken } from '../auth.js';

export const healthRoutes =
  ({
    store,
    queue,
    metrics,
    token,
  }: {
    store: Store;
    queue: Pick<JobQueue<unknown>, 'ping'>;
    metrics: Metrics;
    token: string | undefined;
  }): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const checks = await Promise.allSettled([store.ping(), queue.ping()]);
      const [storage, queueCheck] = checks.map((check) => (check.status === 'fulfilled' ? 'ok' : 'unavailable'));
      const ready = storage === 'ok' && queueCheck === 'ok';
      return reply.status(ready ? 200 : 503).send({ ok: ready, storage, queue: queueCheck });
    });

    // Prometheus scrapes with the internal token as its bearer credentials; no token configured, no metrics here.
    app.get('/metrics', { schema: { hide: true }, onRequest: requireInternalToken(token) }, async (_request, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  };
