import type { Logger } from 'pino';
import { envelope } from '../domain/events.js';
import { isThrottled, retryAfterMs } from '../domain/pacing.js';
import { openSecret } from '../domain/secretBox.js';
import { signatureHeaders } from '../domain/signature.js';
import type { Metrics } from '../observability/metrics.js';
import type { JobHandler } from '../queue/jobQueue.js';
import type { ClaimedDelivery, DeliveryOutcome } from '../storage/deliveries.js';
import type { Store } from '../storage/store.js';
import type { InFlightLimits } from './inFlight.js';
import type { DeliveryJob } from './jobs.js';
import { pace, type PaceSettings } from './pace.js';
import type { Pacer } from './pacer.js';
import type { PostOutcome, Poster } from './poster.js';
import { untilDone } from './retry.js';

export interface DelivererDeps {
  store: Store;
  pacer: Pacer;
  poster: Poster;
  inFlight: InFlightLimits;
  settings: PaceSettings;
  metrics: Metrics;
  log: Logger;
  /** SECRETS_KEY: opens signing secrets stored sealed. */
  secretsKey: Buffer | undefined;
}

const FIRST_DEFERRAL_MS = 50;
const LONGEST_DEFERRAL_MS = 2_000;

/** A delivery over an in-flight cap comes back later, a little later each time, never in step with others. */
const deferral = (times: number) => Math.min(FIRST_DEFERRAL_MS * 2 ** (times - 1), LONGEST_DEFERRAL_MS) * (0.75 + Math.random() / 2);

const toOutcome = (posted: PostOutcome): DeliveryOutcome => {
  if (posted.kind === 'response') {
    const delivered = posted.status >= 200 && posted.status < 300;
    return { status: delivered ? 'delivered' : 'failed', responseStatus: posted.status, durationMs: posted.durationMs };
  }
  return { status: posted.kind === 'refused' ? 'refused' : 'failed', error: posted.error, durationMs: posted.durationMs };
};

/**
 * The `deliveries` job, run by BullMQ workers and the embedded queue alike: waits for the
 * delivery's slot at its target (as a delayed job, holding no worker), steps aside while its
 * account or host has too much in flight, then claims it and sends its one POST. The claim
 * (queued -> sending, once) is what keeps delivery at most once, however often this job runs.
 * A 429 or 503 is recorded as failed, never retried, and holds the target for its Retry-After.
 */
export function createDeliverer({ store, pacer, poster, inFlight, settings, metrics, log, secretsKey }: DelivererDeps): JobHandler<DeliveryJob> {
  async function send(deliveryId: string, claimed: ClaimedDelivery, signal: AbortSignal) {
    const context = { deliveryId, eventId: claimed.event_id, hookId: claimed.hook_id };
    metrics.deliveryWait.observe((claimed.attempted_at.getTime() - claimed.queued_at.getTime()) / 1000);
    const body = JSON.stringify(envelope(claimed.event_type, claimed.data));
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'contact-hooks/1.0',
      ...signatureHeaders(openSecret(claimed.secret, secretsKey), claimed.event_id, body, Date.now() / 1000),
    };
    const posted = await poster.post(claimed.target_url, body, headers);
    if (posted.kind === 'response' && isThrottled(posted.status)) {
      metrics.throttled.inc();
      const holdMs = retryAfterMs(posted.retryAfter, Date.now());
      await untilDone('target hold', () => pacer.hold(claimed.target_url, holdMs), signal, log, context);
    }
    const outcome = toOutcome(posted);
    await untilDone('recording', () => store.deliveries.record(deliveryId, outcome), signal, log, context);
    if (posted.kind === 'response' && posted.status === 410) {
      await store.hooks.deleteGone(claimed.hook_id).catch((error: unknown) => log.error({ err: error, ...context }, 'could not delete a hook its target called gone'));
    }
    metrics.deliveries.inc({ outcome: outcome.status });
    metrics.deliveryDuration.observe(posted.durationMs / 1000);
    log.info({ ...context, outcome: outcome.status, responseStatus: outcome.responseStatus, ms: posted.durationMs }, 'delivery');
  }

  return async (job, signal) => {
    const context = { deliveryId: job.deliveryId };
    const decision = await untilDone('pacing', () => pace(pacer, job, settings), signal, log, context);
    if (decision.kind === 'expired') {
      await untilDone('expiry', () => store.deliveries.expire(job.deliveryId), signal, log, context);
      metrics.deliveries.inc({ outcome: 'expired' });
      return;
    }
    if (decision.kind === 'wait') return { runAt: decision.runAt, data: decision.job };

    const release = inFlight.tryAcquire(job.accountId, new URL(job.targetUrl).host);
    if (!release) {
      const deferrals = (job.deferrals ?? 0) + 1;
      return { runAt: Date.now() + deferral(deferrals), data: { ...decision.job, deferrals } };
    }
    try {
      const claimed = await untilDone('claim', () => store.deliveries.claim(job.deliveryId), signal, log, context);
      if (claimed) return await send(job.deliveryId, claimed, signal);
      // Claimed already (a repeated job), or its subscription or key is gone: then drop it.
      await store.deliveries
        .dropUnclaimable(job.deliveryId)
        .catch((error: unknown) => log.warn({ err: error, ...context }, 'could not drop an unclaimable delivery; the relay will try it again'));
    } finally {
      release();
    }
  };
}
