/**
 * How fast one target may be sent to: the rules of the pacer, with no I/O. The Redis pacer runs
 * the same arithmetic in Lua (src/workers/redisPacer.ts), so one worker or ten pace alike.
 *
 * The limits are GCRA ("virtual scheduling"): a key keeps a theoretical arrival time (TAT), the
 * earliest time the next POST conforms; taking a slot takes the first conforming time at or
 * after now and moves the TAT one interval on. Two chains per target:
 * - the schedule (reserveSlot), taken when a delivery is queued, also under the (account, host)
 *   budget: it tells the delivery when to come back, so waiting holds no worker;
 * - the gate (gateSend), taken when the delivery comes back, just before it is sent: deliveries
 *   that come back late together (a busy worker, a hold ending) leave one interval apart, so the
 *   target never sees a bunch above its rate.
 */

/** Zapier counts its per-user limit over five minutes; so does the (account, host) budget. */
export const HOST_BUDGET_WINDOW_MS = 5 * 60_000;
/** Retry-After is honoured up to this long: a target cannot park our queue for hours. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** A 429 or 503 without a usable Retry-After holds the target this long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

export interface PaceLimits {
  /** Spacing between POSTs to one target URL: 1000 / its rate per second. */
  targetIntervalMs: number;
  /** Steady spacing of an (account, host) budget: the window over the budget. */
  hostIntervalMs: number;
  /** How far the budget may run ahead of its steady pace: a burst of the whole budget. */
  hostBurstMs: number;
}

/** What the pacer remembers of one target URL and one (account, host). */
export interface PaceState {
  /** Earliest conforming time of the next POST scheduled to the target URL. */
  targetTat: number;
  /** Earliest time the next POST may leave for the target URL (the gate). */
  sentTat: number;
  /** Nothing goes to the target before this (its last Retry-After). */
  holdUntil: number;
  /** The (account, host) budget's theoretical arrival time. */
  hostTat: number;
}

export const EMPTY_PACE_STATE: PaceState = { targetTat: 0, sentTat: 0, holdUntil: 0, hostTat: 0 };

/**
 * POSTs leave 2% further apart than the rate allows: a receiver counts arrivals, in a sliding
 * window of its own, and at exactly the rate a few ms of network jitter would put one more
 * arrival in some second than it allows.
 */
export const RATE_MARGIN = 0.02;

export function paceLimits(perSecond: number, hostBudget: number): PaceLimits {
  const hostIntervalMs = HOST_BUDGET_WINDOW_MS / hostBudget;
  return { targetIntervalMs: (1000 / perSecond) * (1 + RATE_MARGIN), hostIntervalMs, hostBurstMs: (hostBudget - 1) * hostIntervalMs };
}

/**
 * The schedule: the first time at or after `now` when one more POST conforms to both limits and
 * the target's hold, and the state once it is reserved. Undefined when that time is after
 * `latest` (the delivery would wait past DELIVERY_MAX_WAIT): nothing is reserved then.
 */
export function reserveSlot(
  now: number,
  state: PaceState,
  limits: PaceLimits,
  latest: number,
): { slot: number; next: PaceState } | undefined {
  const slot = Math.max(now, state.targetTat, state.holdUntil, state.hostTat - limits.hostBurstMs);
  if (slot > latest) return undefined;
  return {
    slot,
    next: { ...state, targetTat: slot + limits.targetIntervalMs, hostTat: Math.max(state.hostTat, slot) + limits.hostIntervalMs },
  };
}

/**
 * How late a delivery may leave after its time at the gate: later, it could leave close behind
 * the next delivery, which leaves on time. A few ms of a timer's jitter, at most an interval.
 */
export const staleAfter = (limits: PaceLimits) => Math.min(limits.targetIntervalMs, GATE_TOLERANCE_MS);
const GATE_TOLERANCE_MS = 5;

/**
 * The gate: when a delivery whose scheduled time has come may leave. A time it took before
 * (`taken`) stands unless a hold was placed on the target since, or it has gone stale (more
 * than an interval ago: the delivery is running late, and leaving now could bunch it with
 * others running late). Otherwise it takes the first time at or after `now` one interval after
 * the last one given out, and after any hold. Undefined when that is after `latest`.
 */
export function gateSend(
  now: number,
  state: PaceState,
  limits: PaceLimits,
  latest: number,
  taken?: number,
): { at: number; next: PaceState } | undefined {
  if (taken !== undefined && state.holdUntil <= taken && now - taken <= staleAfter(limits)) return { at: taken, next: state };
  const at = Math.max(now, state.sentTat, state.holdUntil);
  if (at > latest) return undefined;
  return { at, next: { ...state, sentTat: at + limits.targetIntervalMs } };
}

/**
 * How long a target asked us to stay away, from a 429 or 503 answer's Retry-After: delay
 * seconds or an HTTP date, capped at ten minutes, one second when absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number {
  const value = header?.trim() ?? '';
  let ms = Number.NaN;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else if (/[a-z]/i.test(value)) ms = Date.parse(value) - now; // an HTTP date names its day and month
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** Answers that mean "too much, slow down": recorded as failed, and the target is held. */
export const isThrottled = (status: number) => status === 429 || status === 503;
