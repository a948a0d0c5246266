import type { FastifyBaseLogger } from 'fastify';
import type { DeliveryOutcome, Poster } from '../delivery/poster.js';
import { envelope } from '../domain/events.js';
import { signatureHeaders } from '../domain/signature.js';
import type { Metrics } from '../observability/metrics.js';
import type { EventJobHandler } from '../queue/eventQueue.js';
import type { Store } from '../storage/store.js';
import { forEachLimited } from './limit.js';

/** POSTs in flight for one event at once; a fan-out to many hooks never takes the whole worker. */
const PARALLEL_POSTS_PER_EVENT = 32;

export interface DelivererDeps {
  store: Store;
  poster: Poster;
  metrics: Metrics;
  log: FastifyBaseLogger;
}

const toRecord = (outcome: DeliveryOutcome) => {
  if (outcome.kind === 'response') {
    const delivered = outcome.status >= 200 && outcome.status < 300;
    return { status: delivered ? 'delivered' : 'failed', responseStatus: outcome.status, durationMs: outcome.durationMs } as const;
  }
  return { status: outcome.kind === 'refused' ? 'refused' : 'failed', error: outcome.error, durationMs: outcome.durationMs } as const;
};

/**
 * The one job handler, run by BullMQ workers and by the embedded queue alike. Each (event, hook)
 * is claimed in the database before its POST, and only the claimant sends: a job run twice (stalled,
 * enqueued again, raced by another worker) finds the claims taken and sends nothing more. No retries.
 */
export function createEventDeliverer({ store, poster, metrics, log }: DelivererDeps): EventJobHandler {
  return async (eventId) => {
    const taken = await store.events.takeForDelivery(eventId);
    if (!taken) return;
    const { event, hooks } = taken;
    const body = JSON.stringify(envelope(event.event_type, event.data));

    await forEachLimited(hooks, PARALLEL_POSTS_PER_EVENT, async (hook) => {
      const deliveryId = await store.deliveries.claim(event.id, hook.id);
      if (!deliveryId) return;
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'contact-hooks/1.0',
        ...signatureHeaders(hook.secret, event.id, body, Date.now() / 1000),
      };
      const outcome = await poster.post(hook.target_url, body, headers);
      const record = toRecord(outcome);
      await store.deliveries.record(deliveryId, record);
      if (outcome.kind === 'response' && outcome.status === 410) await store.hooks.deleteGone(hook.id);
      metrics.deliveries.inc({ outcome: record.status });
      metrics.deliveryDuration.observe(outcome.durationMs / 1000);
      log.info({ eventId: event.id, hookId: hook.id, outcome: record.status, responseStatus: record.responseStatus, ms: outcome.durationMs }, 'delivery');
    });
  };
}
