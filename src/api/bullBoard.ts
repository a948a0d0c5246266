import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { createBullBoard } from '@bull-board/api';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { QUEUE_NAMES, type QueueName } from '../queue/jobQueue.js';
import { bullPrefix, connectRedis, type RedisSettings } from '../queue/redisConnection.js';

export interface BullBoardSettings extends RedisSettings {
  /** Off by default: a read-only board can show jobs but not empty, clean, retry, add or pause anything. */
  writable: boolean;
}

/** What an operator reads above each queue's jobs in Bull Board. */
const DESCRIPTIONS: Record<QueueName, string> = {
  events:
    'One job per fired event (job id = the event id, the webhook-id its POSTs carry; name = the event type). A worker fans it out and delivers it; ' +
    'its return value lists each delivery with its status. It fails only when its fan-out could not be written, and is never retried by BullMQ: the relay adds it again.',
  deliveries:
    'Deliveries waiting for a later time: "paced" (their target\'s pace or Retry-After), "waiting-for-room" (in-flight caps), "relayed" (recovered after a crash). ' +
    'The return value is what became of the delivery.',
};

/**
 * Bull Board at /admin/queues; the caller puts it behind the operators' login. Its queues share
 * a connection of their own: the producer's fail-fast connection is for the request path, not for
 * an operator's page.
 */
export function bullBoard({ target, prefix, writable }: BullBoardSettings) {
  return async (app: FastifyInstance) => {
    const connection = connectRedis(target, 'operator');
    const queues = QUEUE_NAMES.map((name) => {
      const queue = new Queue(name, { connection, prefix: bullPrefix(prefix) });
      queue.on('error', (error) => app.log.warn({ err: error, queue: name }, 'Bull Board lost Redis; its pages fail until it is back'));
      return { name, queue };
    });
    app.addHook('onClose', async () => {
      await Promise.all(queues.map(({ queue }) => queue.close()));
      connection.disconnect();
    });
    if (!writable) {
      // Bull Board's read-only mode hides the buttons and refuses its own write routes; refusing
      // every method that could write keeps it so for any route a later Bull Board adds.
      app.addHook('onRequest', async (request, reply) => {
        if (request.method !== 'GET' && request.method !== 'HEAD') return reply.status(405).header('allow', 'GET, HEAD').send({ error: 'read_only' });
      });
    }
    app.addHook('onSend', async (_request, reply, payload) =>
      typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html') ? withoutThirdPartyFonts(payload) : payload,
    );
    const serverAdapter = new FastifyAdapter();
    createBullBoard({
      queues: queues.map(({ name, queue }) => new BullMQAdapter(queue, { readOnlyMode: !writable, description: DESCRIPTIONS[name] })),
      serverAdapter,
    });
    serverAdapter.setBasePath('/admin/queues');
    await app.register(serverAdapter.registerPlugin(), { prefix: '/admin/queues' });
  };
}

/**
 * Bull Board's page links its fonts from fonts.googleapis.com: offline that request fails, and
 * online every operator's page load would tell Google. Without the link the page uses the
 * browser's sans-serif and monospace fonts, and asks nothing of any other host.
 */
const withoutThirdPartyFonts = (html: string) => html.replace(/<link\b[^>]*\bhref="https:\/\/fonts\.(googleapis|gstatic)\.com[^>]*>\s*/g, '');
