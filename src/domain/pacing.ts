/**
 * How fast one target may be sent to: the rules of the pacer, with no I/O. The Redis pacer runs
 * the same arithmetic in Lua (src/workers/redisPacer.ts), so one worker or ten pace alike.
 *
 * One line per target URL, one gate. A delivery arriving at the gate for the first time takes a
 * place at the end of its target's line (GCRA: the line's tail moves one interval on), within
 * its (account, host) budget; it may leave at its place, and never sooner than one interval
 * after the last departure. A departure due soon is granted and recorded; a delivery whose place
 * is later waits for it (holding no worker) and passes the gate again then, keeping its place:
 * a late wake delays it, and never spends a time nobody uses. A target's answer that it is
 * throttled holds its line (throttling.ts); turns between accounts are in turns.ts.
 */

import { MAX_PER_SECOND_RANGE } from './hooks.js';

/** Zapier counts its per-user limit over five minutes; so does the (account, host) budget. */
export const HOST_BUDGET_WINDOW_MS = 5 * 60_000;

/**
 * A receiver counts arrivals in a sliding second of its own clock, and what lies between our
 * gate and that clock (the claim's commit, a busy event loop, a TLS handshake, the network)
 * delays some POSTs more than others. So the gate lets at most `rate` POSTs leave in any window
 * of 1000 ms plus this allowance: arrivals may then differ in delay by up to this much and no
 * second at the receiver holds more than `rate`, at 1/s as at 100/s. It costs the same share of
 * the rate at every rate (1000 / 1080: 7%). UNREPORTED_LATENESS_MS of it is the sender's; the
 * rest is the network's and the receiver's.
 */
export const JITTER_ALLOWANCE_MS = 80;
/** The window in which no more than `rate` departures to one target may fall: a second and the allowance. */
export const PACE_WINDOW_MS = 1000 + JITTER_ALLOWANCE_MS;

/**
 * A delivery that would leave later than this after the departure the gate granted it (its
 * process stalled: a long query, a collection, a burst of work) does not leave then: it passes
 * the gate again, keeping its place, so no stall can bunch the POSTs of one target together
 * (at a target held to its departures' times: heldToDepartureTimes).
 */
export const LATE_DEPARTURE_MS = JITTER_ALLOWANCE_MS / 2;

/**
 * How late a POST's first byte may leave after its departure (after the handshake allowance when
 * it opens a connection; from the soonest the departure may have been in the sender's clock, so
 * the gate's round trip counts) before the pacer is told (startedOffTime). Timers and a busy event loop
 * make a few ms usual, and each report costs a pacer call; what goes unreported comes out of the
 * jitter allowance, which is the network's and the receiver's but for this much. Under load
 * nearly every POST starts within a few ms of its departure, so few are reported.
 */
export const UNREPORTED_LATENESS_MS = 10;

export interface PaceLimits {
  /** The target's rate: at most this many departures in any window. */
  perSecond: number;
  /**
   * Spacing between departures to one target URL: the window (1000 ms + the jitter allowance)
   * over the rate, so any `rate` + 1 consecutive departures span at least the window.
   */
  targetIntervalMs: number;
  /**
   * Whether the pacer keeps the target's last `rate` departures (up to the fastest pace a
   * subscription may ask for): see PaceState.rateAgo. A faster DELIVERY_RATE_PER_TARGET is a cap
   * on throughput that no receiver counts to, paced by the interval alone.
   */
  keepsWindow: boolean;
  /** Steady spacing of an (account, host) budget: the window over the budget. */
  hostIntervalMs: number;
  /** How far the budget may run ahead of its steady pace: a burst of the whole budget. */
  hostBurstMs: number;
}

export function paceLimits(perSecond: number, hostBudget: number): PaceLimits {
  const hostIntervalMs = HOST_BUDGET_WINDOW_MS / hostBudget;
  return {
    perSecond,
    targetIntervalMs: PACE_WINDOW_MS / perSecond,
    keepsWindow: heldToDepartureTimes(perSecond),
    hostIntervalMs,
    hostBurstMs: (hostBudget - 1) * hostIntervalMs,
  };
}

/** What the pacer remembers of one target URL and one (account, host). */
export interface PaceState {
  /** The end of the target's line: the place the next delivery to arrive is given. */
  tail: number;
  /** The last departure granted to the target. */
  lastSent: number;
  /** How many departures to the target were granted at this rate: the number of the last one. */
  sent: number;
  /**
   * When the departure `rate` before the next one counts as having reached the target (its
   * GrantedDeparture.countsAt), or 0: fewer than `rate` departures were granted at this rate, or
   * the pacer keeps no window (PaceLimits.keepsWindow). The next departure leaves a window after it.
   */
  rateAgo: number;
  /** Nothing goes to the target before this (its last Retry-After). */
  holdUntil: number;
  /** The (account, host) budget's theoretical arrival time. */
  hostTat: number;
}

export const EMPTY_PACE_STATE: PaceState = { tail: 0, lastSent: 0, sent: 0, rateAgo: 0, holdUntil: 0, hostTat: 0 };

/**
 * A departure the gate granted, as the pacer recorded it (its own clock): its number among the
 * target's departures, when it counts as having reached the target (its time, and
 * NEW_CONNECTION_ALLOWANCE_MS more when it was spaced for a handshake: a connection asked for, or
 * the target idle), and whether it was. The pacer keeps `countsAt` among the target's last
 * `rate` departures; it is handed back when the POST starts off its time (startedOffTime).
 */
export interface GrantedDeparture {
  seq: number;
  countsAt: number;
  forHandshake: boolean;
}

/**
 * A delivery whose departure comes within this long is given that departure outright: it waits
 * for it in its worker and leaves without passing again. Passing again after each short wait
 * would add the round trip and the worker's own lateness to every interval, and a paced
 * target would lose a share of its rate to that under load.
 */
export const SOON_MS = 250;

/**
 * A POST on a new connection pays a TLS handshake on its way, and reaches the target later than
 * the next one would: so the departure after it is spaced this much further, and the handshake
 * cannot put one POST too many in a receiver's second. A target with no departure for
 * IDLE_CONNECTION_MS (undici lets idle sockets go after 4 s) is taken to need one, and so is a
 * departure whose process has had no answer from the target's host in that time (each worker
 * has its own connections).
 */
export const IDLE_CONNECTION_MS = 4_000;
export const NEW_CONNECTION_ALLOWANCE_MS = 250;

/** What a pass at the gate asks beyond the delivery's own target and limits. */
export interface GateAsk {
  /** Its place in line from an earlier pass; absent the first time, when it takes one. */
  place?: number | undefined;
  /** Its claim commits first: its departure comes no sooner than this long from now. */
  leadMs?: number;
  /** A departure further off than this is not granted but waited for (SOON_MS by default). */
  soonMs?: number;
  /** Its POST will likely open a connection (its process has none to the host): see NEW_CONNECTION_ALLOWANCE_MS. */
  newConnection?: boolean;
}

/**
 * The gate. A delivery without a place takes one (the first conforming time at or after `now`
 * plus its lead, the soonest it could leave, under both limits and the hold); one with a place
 * keeps it. Places are an interval apart. Its departure, `at`, is at its place, or as soon after
 * as the hold and the target's window allow (windowBound). When `at` is within `soonMs`, the
 * departure is its own: recorded (it counts NEW_CONNECTION_ALLOWANCE_MS later when it will open a
 * connection). Later, it comes back then, keeping its place. Undefined when `at` comes after
 * `latest` (it would wait past DELIVERY_MAX_WAIT): nothing is taken then.
 *
 * `from`: once its claim has committed, a granted delivery may leave this early, up to its lead
 * before `at`, but never sooner than the window allows. Leaving early only widens its distance
 * to the departures after it, which are spaced from what was recorded; so the window holds,
 * while a claim that commits sooner than its lead foresaw costs the POST nothing. (Its place in
 * line and its (account, host) budget's pace may be run ahead of by that much: never more than a
 * claim lead.)
 */
export function passGate(
  now: number,
  state: PaceState,
  limits: PaceLimits,
  latest: number,
  ask: GateAsk = {},
): { at: number; from: number; place: number; next: PaceState; granted?: GrantedDeparture } | undefined {
  const leadMs = ask.leadMs ?? 0;
  const earliest = now + leadMs;
  let { place } = ask;
  let next = state;
  if (place === undefined) {
    place = Math.max(earliest, state.tail, state.holdUntil, state.hostTat - limits.hostBurstMs);
    next = { ...state, tail: place + limits.targetIntervalMs, hostTat: Math.max(state.hostTat, place) + limits.hostIntervalMs };
  }
  const bound = Math.max(windowBound(state, limits), state.holdUntil);
  const at = Math.max(place, earliest, bound);
  if (at > latest) return undefined;
  const from = Math.max(at - leadMs, bound);
  if (at > earliest + (ask.soonMs ?? SOON_MS)) return { at, from, place, next };
  const handshake = ask.newConnection === true || at - state.lastSent > IDLE_CONNECTION_MS;
  const granted = { seq: state.sent + 1, countsAt: at + (handshake ? NEW_CONNECTION_ALLOWANCE_MS : 0), forHandshake: handshake };
  return { at, from, place, next: { ...next, lastSent: at, sent: granted.seq }, granted };
}

/** Where the pacer keeps departure `seq` among a target's last `perSecond`: a slot that the departure `perSecond` later takes over. */
export const windowSlot = (seq: number, perSecond: number) => seq % perSecond;

/**
 * The soonest the next departure to a target may leave: a window after the departure `rate`
 * before it counts (rateAgo), so no `rate` + 1 departures ever reach the target within one
 * window, and after the last one, so departures keep their order. While departures keep to
 * their places (an interval apart) the window is just met. One delayed (a late wake, a claim
 * lead that grew, a handshake's allowance, a late start) shifts those after it by at most its
 * own delay: they catch up towards their places at up to twice the rate, as far as the window
 * allows, and several delays within a window cost the largest of them, not their sum, as they
 * would if every departure were spaced an interval after the last. Until `rate` departures were
 * granted at this rate (a fresh target, or its rate changed), and for a rate no receiver counts
 * to (keepsWindow), an interval after the last.
 */
export function windowBound(state: Pick<PaceState, 'lastSent' | 'sent' | 'rateAgo'>, limits: PaceLimits): number {
  if (!limits.keepsWindow || state.sent < limits.perSecond) return state.lastSent + limits.targetIntervalMs;
  return Math.max(state.lastSent + limits.targetIntervalMs / 2, state.rateAgo + PACE_WINDOW_MS);
}

/**
 * How much later than its departure allowed a POST's first byte left (negative: sooner): the
 * departure granted at `departedAt`, with NEW_CONNECTION_ALLOWANCE_MS when it was spaced for a
 * handshake, and UNREPORTED_LATENESS_MS.
 */
export const startOffsetMs = (departedAt: number, newConnection: boolean, startedAt: number) =>
  startedAt - (departedAt + (newConnection ? NEW_CONNECTION_ALLOWANCE_MS : 0) + UNREPORTED_LATENESS_MS);

/**
 * Whether the pacer is told of a POST's start (startedOffTime): when it started late, and when a
 * departure spaced for a handshake started sooner than its allowance ran out (the handshake took
 * less, or the connection was there after all). That allowance would otherwise bind the departure
 * `rate` after it for good: in a backlog each place is an interval after the last, so a line
 * never catches up what its window lost, and each process's first POST would cost a busy target
 * the rest of its allowance for good. Only a
 * handshake's departure is told of an early start: it is one in many, where any other's would
 * cost a pacer call for a few ms.
 */
export const tellsStart = (departure: Pick<GrantedDeparture, 'forHandshake'>, offsetMs: number) => offsetMs > 0 || (departure.forHandshake && offsetMs < 0);

/**
 * A POST whose first byte left `byMs` later than its departure allowed (startOffsetMs): its
 * handshake ran long (a loaded machine, a distant host), or it found no free connection where
 * one was expected, or its process was busy. It reached the target as if it had left `byMs`
 * later: it counts from then (the `countsAt` returned), so the departure `rate` after it leaves a
 * window after that; the departures between are bound by the window of those before them, and
 * those after by the order of departures (windowBound). Two POSTs late together by the same
 * amount move the line once, not twice. A negative `byMs` (a handshake quicker than its
 * allowance: tellsStart) counts it from when it really left too, a little after its departure:
 * never sooner than UNREPORTED_LATENESS_MS before its first byte, as for any POST. Undefined once
 * `rate` departures came after it (it started about a window late, less SOON_MS and the claim
 * lead): the one that needed to wait has left; and so when the rate changed since (`sent` counts
 * from 0 again).
 */
export function startedOffTime(state: Pick<PaceState, 'sent'>, departure: GrantedDeparture, byMs: number, limits: PaceLimits): number | undefined {
  const since = state.sent - departure.seq;
  return since < 0 || since >= limits.perSecond ? undefined : departure.countsAt + byMs;
}

/**
 * Whether a target paced `perSecond` is held to the times of its departures: up to the fastest
 * pace a subscription may ask for (max_per_second). Its late starts are accounted (startedOffTime),
 * and a POST too late for its departure does not leave then (LATE_DEPARTURE_MS). A faster
 * DELIVERY_RATE_PER_TARGET is a cap on throughput that no receiver counts to. Moving such a
 * target on by each late start would stall it whole for the lateness, again and again while a
 * growing pool opens connections; and giving a late claim back would add a give-back, a gate and
 * a claim to each delivery just when the process is slowest, a loop that feeds itself: claims
 * given back again and again, and more workers delivering less than one.
 */
export const heldToDepartureTimes = (perSecond: number) => perSecond <= MAX_PER_SECOND_RANGE.max;

/**
 * A delivery granted a departure is claimed a moment before it, as long as claims take lately
 * (their mean and three deviations, within these bounds), so that the claim's commit is not
 * added to the departure: under load, or with a slow database, a claim taking longer than the
 * LATE_DEPARTURE_MS allowance would otherwise make every departure late, and none would leave.
 * The gate grants no departure sooner than that lead, so every departure is one it granted.
 * A crash in this moment leaves the claim `sending` unsent, as a crash mid-POST would.
 */
export const SHORTEST_CLAIM_LEAD_MS = 10;
export const LONGEST_CLAIM_LEAD_MS = 1_000;
/** How long claims take lately: an exponentially weighted mean and mean deviation, ms. */
export function createClaimLead() {
  let mean = SHORTEST_CLAIM_LEAD_MS;
  let deviation = 0;
  return {
    observe(ms: number) {
      const sample = Math.min(ms, LONGEST_CLAIM_LEAD_MS);
      deviation += (Math.abs(sample - mean) - deviation) / 8;
      mean += (sample - mean) / 8;
    },
    get ms() {
      return Math.min(Math.max(mean + 3 * deviation, SHORTEST_CLAIM_LEAD_MS), LONGEST_CLAIM_LEAD_MS);
    },
  };
}
