import type { GateAsk, GrantedDeparture } from '../domain/pacing.js';
import type { Delivery } from '../domain/delivery.js';
import type { Pacer } from './pacer.js';

export interface PaceSettings {
  /** POSTs per second per target URL, unless the subscription set its own. */
  ratePerTarget: number;
  /** Longest a delivery may wait for its time, from when it was queued. */
  maxWaitMs: number;
}

export type GateDecision =
  /**
   * Leave in `inMs`, or from `fromMs` once claimed: the departure (`granted`) is this delivery's.
   * `delivery` holds its place. `answeredInMs`: how long the pacer took to answer, in this process's
   * clock (see passGate).
   */
  | { kind: 'go'; inMs: number; fromMs: number; answeredInMs: number; granted: GrantedDeparture; delivery: Delivery }
  /** Run again at `dueAt`, holding its place. */
  | { kind: 'wait'; delivery: Delivery & { place: number }; dueAt: number }
  | { kind: 'expired' };

/**
 * Passes a delivery through its target's gate: it leaves now or in a moment, or waits for its
 * place (holding no worker: it runs again then), or expires, when no time comes before
 * DELIVERY_MAX_WAIT runs out.
 *
 * The pacer's times are counted from its own now, which lies somewhere between asking and the
 * answer (Redis ran the gate then). Counting `inMs` from the answer never leaves early; but an
 * answer that reached this process late (a busy event loop, a slow path back) makes the POST
 * leave later than the departure the pacer recorded, by up to the time it took to answer: so a
 * POST's lateness is counted from the soonest the departure may have been (`answeredInMs` earlier).
 */
export async function passGate(pacer: Pacer, delivery: Delivery, settings: PaceSettings, departure: Omit<GateAsk, 'place'>): Promise<GateDecision> {
  const maxWaitMs = delivery.queuedAt + settings.maxWaitMs - Date.now();
  if (maxWaitMs < 0) return { kind: 'expired' };
  const asked = Date.now();
  const answer = await pacer.gate({
    targetUrl: delivery.targetUrl,
    accountId: delivery.accountId,
    perSecond: delivery.maxPerSecond ?? settings.ratePerTarget,
    maxWaitMs,
    place: delivery.place,
    ...departure,
  });
  if (answer.kind === 'too_late') return { kind: 'expired' };
  if (answer.kind === 'go') {
    const { inMs, fromMs, granted } = answer;
    return { kind: 'go', inMs, fromMs, answeredInMs: Date.now() - asked, granted, delivery: { ...delivery, place: answer.place } };
  }
  return { kind: 'wait', delivery: { ...delivery, place: answer.place }, dueAt: Date.now() + answer.waitMs };
}
