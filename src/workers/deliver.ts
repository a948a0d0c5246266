import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { gate, schedule, type PaceSettings } from './pace.js';
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

/**
 * A claimed delivery whose time at the gate is this close waits for it in its worker: a queue's
 * delayed job cannot land on the millisecond (BullMQ's come back up to WAKE_EARLY_MS early on
 * purpose), and a target's time is best spent on time. A longer wait (a hold, a bunch of late
 * deliveries) gives the claim back and waits as a job, keeping its place in line at the gate.
 */
const LONGEST_WAIT_AT_GATE_MS = 250;
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
 * The `deliveries` job, run by BullMQ workers and the embedded queue alike. It runs at its
 * scheduled time (waiting as a delayed job, holding no worker), steps aside while its account or
 * host has too much in flight, claims the delivery, passes the target's gate and sends its one
 * POST. The claim (queued -> sending, once) keeps delivery at most once however often this job
 * runs; the gate comes after it so that nothing between gate and wire (a slow claim) can bunch
 * POSTs. When the gate says "later", the claim is given back (nothing was sent) and the job
 * waits, unless "later" is a few ms. A 429 or 503 is recorded as failed, never retried, and
 * holds the target for its Retry-After.
 */
export function createDeliverer({ store, pacer, poster, inFlight, settings, metrics, log, secretsKey }: DelivererDeps): JobHandler<DeliveryJob> {
  const expire = async (deliveryId: string, claimed: boolean, signal: AbortSignal) => {
    const context = { deliveryId };
    if (claimed) await untilDone('expiry', () => store.deliveries.giveBack(deliveryId, 'expired'), signal, log, context);
    else await untilDone('expiry', () => store.deliveries.expire(deliveryId), signal, log, context);
    metrics.deliveries.inc({ outcome: 'expired' });
  };

  return async (job, signal) => {
    const context = { deliveryId: job.deliveryId };
    if (job.slot === undefined) {
      // Restored by the relay: it was never scheduled, or its schedule was lost with its job. It
      // ran ahead of the line (it has no turn yet, and it is the oldest work); a later time is
      // waited for in its turn.
      const scheduled = await untilDone('pacing', () => schedule(pacer, job, settings), signal, log, context);
      if (scheduled.kind === 'expired') return expire(job.deliveryId, false, signal);
      if (scheduled.runAt > Date.now()) return { runAt: scheduled.runAt, data: scheduled.job, priority: scheduled.turn };
      job = scheduled.job;
    }

    const release = inFlight.tryAcquire(job.targetUrl, job.accountId, new URL(job.targetUrl).host);
    if (!release) {
      const deferrals = (job.deferrals ?? 0) + 1;
      return { runAt: Date.now() + deferral(deferrals), data: { ...job, deferrals } };
    }
    try {
      // One token for this run's claim, so retrying it after a lost answer finds the claim ours.
      const token = randomUUID();
      const claimed = await untilDone('claim', () => store.deliveries.claim(job.deliveryId, token), signal, log, context);
      if (!claimed) {
        // Claimed already (a repeated job), or its subscription or key is gone: then drop it.
        await store.deliveries
          .dropUnclaimable(job.deliveryId)
          .catch((error: unknown) => log.warn({ err: error, ...context }, 'could not drop an unclaimable delivery; the relay will try it again'));
        return;
      }
      let gated = await untilDone('pacing', () => gate(pacer, job, settings), signal, log, context);
      // A near time is waited for here, then passed again: the gate lets it leave only an
      // interval after the last POST that left, however late this wake came.
      while (gated.kind === 'wait' && gated.runAt - Date.now() <= LONGEST_WAIT_AT_GATE_MS) {
        await sleep(Math.max(0, gated.runAt - Date.now()));
        const waited = gated.job;
        gated = await untilDone('pacing', () => gate(pacer, waited, settings), signal, log, context);
      }
      if (gated.kind === 'expired') return await expire(job.deliveryId, true, signal);
      if (gated.kind === 'wait') {
        await untilDone('giving a claim back', () => store.deliveries.giveBack(job.deliveryId, 'queued'), signal, log, context);
        return { runAt: gated.runAt, data: gated.job };
      }
      await send(job.deliveryId, claimed, signal);
    } finally {
      release();
    }
  };

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
}
