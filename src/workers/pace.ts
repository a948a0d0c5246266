import type { DeliveryJob } from './jobs.js';
import type { Pacer } from './pacer.js';

export interface PaceSettings {
  /** POSTs per second per target URL, unless the subscription set its own. */
  ratePerTarget: number;
  /** Longest a delivery may wait for its slot, from when it was queued. */
  maxWaitMs: number;
}

export type PaceDecision =
  | { kind: 'send'; job: DeliveryJob }
  | { kind: 'wait'; runAt: number; job: DeliveryJob }
  | { kind: 'expired' };

/**
 * Where a delivery stands at the pacer: its slot has come (send now), it is ahead (wait until
 * then, holding no worker), or no slot comes before DELIVERY_MAX_WAIT runs out (expired). A slot
 * reserved earlier is kept unless the target was held (Retry-After) since it was reserved.
 */
export async function pace(pacer: Pacer, job: DeliveryJob, settings: PaceSettings): Promise<PaceDecision> {
  const maxWaitMs = job.queuedAt + settings.maxWaitMs - Date.now();
  if (maxWaitMs < 0) return { kind: 'expired' };
  const answer = await pacer.reserve({
    targetUrl: job.targetUrl,
    accountId: job.accountId,
    perSecond: job.maxPerSecond ?? settings.ratePerTarget,
    maxWaitMs,
    reserved: job.slot,
  });
  if (answer.kind === 'too_late') return { kind: 'expired' };
  const paced = { ...job, slot: answer.slot };
  return answer.waitMs > 0 ? { kind: 'wait', runAt: Date.now() + answer.waitMs, job: paced } : { kind: 'send', job: paced };
}
