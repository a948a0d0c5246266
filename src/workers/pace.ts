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

const requestOf = (job: DeliveryJob, settings: PaceSettings) => ({
  targetUrl: job.targetUrl,
  accountId: job.accountId,
  perSecond: job.maxPerSecond ?? settings.ratePerTarget,
  maxWaitMs: job.queuedAt + settings.maxWaitMs - Date.now(),
});

/**
 * Gives a delivery its scheduled time at its target: it runs then (a delayed job holds no
 * worker), in its turn among its account's deliveries due then (its queue priority), or it
 * expires when no time comes before DELIVERY_MAX_WAIT runs out.
 */
export async function schedule(
  pacer: Pacer,
  job: DeliveryJob,
  settings: PaceSettings,
): Promise<{ kind: 'expired' } | { kind: 'scheduled'; runAt: number; turn: number; job: DeliveryJob }> {
  const request = requestOf(job, settings);
  const scheduled = request.maxWaitMs < 0 ? ({ kind: 'too_late' } as const) : await pacer.schedule(request);
  if (scheduled.kind === 'too_late') return { kind: 'expired' };
  return { kind: 'scheduled', runAt: Date.now() + scheduled.waitMs, turn: scheduled.turn, job: { ...job, slot: scheduled.at } };
}

/**
 * When a claimed delivery may leave: now, or a moment later behind others that came back late
 * together (it then gives its claim back and waits, holding no worker), or never, when no time
 * comes before DELIVERY_MAX_WAIT runs out. A gate time taken on an earlier run is kept unless
 * the target was held since.
 */
export async function gate(pacer: Pacer, job: DeliveryJob, settings: PaceSettings): Promise<PaceDecision> {
  const request = requestOf(job, settings);
  const gated = request.maxWaitMs < 0 ? ({ kind: 'too_late' } as const) : await pacer.gate({ ...request, taken: job.sendAt });
  if (gated.kind === 'too_late') return { kind: 'expired' };
  const next = { ...job, sendAt: gated.at };
  return gated.waitMs > 0 ? { kind: 'wait', runAt: Date.now() + gated.waitMs, job: next } : { kind: 'send', job: next };
}
