/**
 * How fast one target may be sent to: the rules of the pacer, with no I/O. The Redis pacer runs
 * the same arithmetic in Lua (src/workers/redisPacer.ts), so one worker or ten pace alike.
 *
 * The limits are GCRA ("virtual scheduling"): a key keeps a theoretical arrival time (TAT), the
 * earliest time the next POST conforms; taking a slot takes the first conforming time at or
 * after now and moves the TAT one interval on. Two chains per target:
 * - the schedule (reserveSlot), taken when a delivery is queued, also under the (account, host)
 *   budget: it tells the delivery when to come back, so waiting holds no worker;
 * - the gate (gateSend), passed when the delivery comes back, just before it is sent: POSTs
 *   leave at least one interval after the last one that left, so deliveries that come back late
 *   together (a busy worker, a hold ending) never reach the target above its rate.
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
  /** The end of the line at the gate: the time the next delivery to arrive there is given. */
  sentTat: number;
  /** When the last POST to the target URL left (the gate spaces departures from it). */
  lastSent: number;
  /** Nothing goes to the target before this (its last Retry-After). */
  holdUntil: number;
  /** The (account, host) budget's theoretical arrival time. */
  hostTat: number;
}

export const EMPTY_PACE_STATE: PaceState = { targetTat: 0, sentTat: 0, lastSent: 0, holdUntil: 0, hostTat: 0 };

/**
 * POSTs leave 5% further apart than the rate allows: a receiver counts arrivals, in a sliding
 * window of its own, and what happens between our gate and its clock (a busy event loop, a TLS
 * handshake on a fresh connection) delays some POSTs more than others. With departures 5% apart,
 * arrivals may differ in delay by up to 50 ms before a second holds one more than the rate.
 */
export const RATE_MARGIN = 0.05;

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
 * The gate: when a delivery whose scheduled time has come may leave. POSTs to one target leave
 * at least an interval apart, counted from the last one that actually left (`lastSent`), so
 * deliveries that come back late together never leave together, and a late one never makes a
 * later one leave early: whatever a busy process or a hold delays, the target never sees more
 * than its rate in any second.
 *
 * A delivery arriving at the gate reserves the next time in line (`sentTat` moves on), so that
 * deliveries waiting for one target wake one after another rather than all at once. One that
 * holds a time already (`taken`, from an earlier run) keeps its place: it leaves at that time,
 * or as soon after it as the interval since the last departure and any hold allow. A late wake
 * (a busy process, an imprecise timer) therefore delays a delivery, and never spends a time
 * nobody uses. Leaving now records the departure. Undefined when the time is after `latest`.
 */
export function gateSend(
  now: number,
  state: PaceState,
  limits: PaceLimits,
  latest: number,
  taken?: number,
): { at: number; next: PaceState } | undefined {
  const earliest = Math.max(now, state.lastSent + limits.targetIntervalMs, state.holdUntil);
  const place = taken ?? Math.max(earliest, state.sentTat);
  const at = Math.max(earliest, place);
  if (at > latest) return undefined;
  const next = taken === undefined ? { ...state, sentTat: place + limits.targetIntervalMs } : state;
  return { at, next: at <= now ? { ...next, lastSent: now } : next };
}

/**
 * Fairness between accounts, for when more deliveries are due than the workers can send at once.
 * A delivery's turn is its place among its account's deliveries scheduled within the same
 * second (1, 2, 3, …), and due deliveries run in order of turn. An account whose burst puts
 * 3,000 deliveries in one second takes turns 1 to 3,000; another account's 20 in that second
 * take turns 1 to 20, so they go out among the burst's first, not behind all of it.
 */
export const TURN_WINDOW_MS = 1000;

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
