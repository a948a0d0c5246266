/**
 * How fast one target may be sent to: the rules of the pacer, with no I/O. The Redis pacer runs
 * the same arithmetic in Lua (src/workers/redisPacer.ts), so one worker or ten pace alike.
 *
 * Both limits are GCRA ("virtual scheduling"): each key keeps a theoretical arrival time (TAT),
 * the earliest time the next POST conforms. A reservation takes the first conforming time, at
 * or after now, and moves the TAT one interval on. Reserving ahead is what lets a delivery wait
 * for its slot without holding a worker: it knows when to come back.
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
  /** Earliest conforming time of the next POST to the target URL. */
  targetTat: number;
  /** Nothing goes to the target before this (its last Retry-After). */
  holdUntil: number;
  /** The (account, host) budget's theoretical arrival time. */
  hostTat: number;
}

export const EMPTY_PACE_STATE: PaceState = { targetTat: 0, holdUntil: 0, hostTat: 0 };

export function paceLimits(perSecond: number, hostBudget: number): PaceLimits {
  const hostIntervalMs = HOST_BUDGET_WINDOW_MS / hostBudget;
  return { targetIntervalMs: 1000 / perSecond, hostIntervalMs, hostBurstMs: (hostBudget - 1) * hostIntervalMs };
}

/**
 * The first time at or after `now` when one more POST conforms to both limits and the target's
 * hold, and the state once it is reserved. Undefined when that time is after `latest` (the
 * delivery would wait past DELIVERY_MAX_WAIT): nothing is reserved then.
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
    next: {
      targetTat: slot + limits.targetIntervalMs,
      holdUntil: state.holdUntil,
      hostTat: Math.max(state.hostTat, slot) + limits.hostIntervalMs,
    },
  };
}

/**
 * How long a target asked us to stay away, from a 429 or 503 answer's Retry-After: delay
 * seconds or an HTTP date, capped at ten minutes, one second when absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number {
  const value = header?.trim() ?? '';
  let ms = Number.NaN;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else if (value !== '') ms = Date.parse(value) - now;
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** Answers that mean "too much, slow down": recorded as failed, and the target is held. */
export const isThrottled = (status: number) => status === 429 || status === 503;
