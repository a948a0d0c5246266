import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { createClaimLead, heldToDepartureTimes, LATE_DEPARTURE_MS, startOffsetMs, tellsStart, type GrantedDeparture } from '../domain/pacing.js';
import { isThrottled, retryAfterMs } from '../domain/throttling.js';
import type { createTurnCounter } from '../domain/turns.js';
import { DELIVERY_USER_AGENT, reportOf, type Delivery, type DeliveryReport } from '../domain/delivery.js';
import { openSecret } from '../domain/secretBox.js';
import { signatureHeaders } from '../domain/signature.js';
import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Metrics } from '../observability/metrics.js';
import type { DeliveryOutcome } from '../storage/deliveries.js';
import type { Store } from '../storage/store.js';
import { createDeliveryWrites, type Parking } from './deliveryWrites.js';
import type { LineHandler, LineStep } from './line.js';
import { passGate, type PaceSettings } from './pace.js';
import type { Pacer } from './pacer.js';
import type { PostOutcome, Poster } from './poster.js';
import { untilDone } from './retry.js';

export interface DelivererDeps {
  store: Store;
  pacer: Pacer;
  poster: Poster;
  settings: PaceSettings;
  metrics: Metrics;
  log: Logger;
  /** SECRETS_KEY: opens signing secrets stored sealed. */
  secretsKey: Buffer | undefined;
  /** Where a delivery waits that must wait longer than NEAR_WAIT_MS: the `deliveries` queue. */
  parking: Parking;
  /** Aborts at shutdown: the engine's retried writes stop then. */
  stopping: AbortSignal;
  /** When recording outcomes disables a hook (HOOK_DISABLE_AFTER, HOOK_DISABLE_MIN_FAILURES). */
  disableRule: HookDisableRule;
  /** The process's turns between accounts (src/domain/turns.ts), shared with the line's newcomers. */
  turnOf: ReturnType<typeof createTurnCounter>;
}

/**
 * A wait up to this long is spent in this process's line, holding the job it is of. A longer one
 * is parked in the `deliveries` queue, so that no job holds a worker's concurrency while its
 * target's pace keeps it waiting.
 */
export const NEAR_WAIT_MS = 1_000;

/**
 * A departure the gate granted: when (epoch ms), how soon it may leave once claimed, the soonest
 * the pacer's time for it may have been in this process's clock (its answer took a while to come:
 * passGate in pace.ts), and the pacer's record of it.
 */
interface Departure {
  at: number;
  from: number;
  soonestAt: number;
  granted: GrantedDeparture;
}

const departureOf = (gated: { inMs: number; fromMs: number; answeredInMs: number; granted: GrantedDeparture }): Departure => {
  const now = Date.now();
  return { at: now + gated.inMs, from: now + gated.fromMs, soonestAt: now + gated.inMs - gated.answeredInMs, granted: gated.granted };
};

const toOutcome = (posted: PostOutcome): DeliveryOutcome => {
  if (posted.kind === 'response') {
    const delivered = posted.status >= 200 && posted.status < 300;
    return { status: delivered ? 'delivered' : 'failed', responseStatus: posted.status, durationMs: posted.durationMs };
  }
  return { status: posted.kind === 'refused' ? 'refused' : 'failed', error: posted.error, durationMs: posted.durationMs };
};

/** A delivery that keeps finding no in-flight room comes back at most 2^6 NEAR_WAIT_MS later (about a minute). */
const LONGEST_ROOM_BACK_OFF_DOUBLINGS = 6;

/**
 * Asked of the gate by a delivery placing itself: grant nothing, however soon its place comes
 * (passGate grants a departure only within this of the soonest it could leave).
 */
const PLACE_ONLY_MS = -1;

const done = (report: DeliveryReport | Promise<DeliveryReport>): LineStep<Delivery, DeliveryReport> => ({ done: report });

/**
 * The one delivery handler, behind every process's line (line.ts). A delivery passes its target's
 * gate (or waits for its place there, holding no worker), then is claimed and sent at once: the
 * claim (queued -> sending, once) is the last step before the POST, so a crash can only leave
 * `sending` what was on the wire, and every delivery only waiting goes back to the line or the
 * `deliveries` queue. The claim keeps delivery at most once however often this runs. A 429 or
 * 503 is recorded as failed, never retried, and holds the target for its Retry-After.
 */
export function createDeliverer(deps: DelivererDeps) {
  const { store, pacer, poster, settings, metrics, log, secretsKey, stopping, turnOf } = deps;
  const writes = createDeliveryWrites(store, deps.parking, log, stopping, { rule: deps.disableRule, metrics });
  const recording = new Set<Promise<unknown>>();
  const claimLead = createClaimLead();

  /**
   * A delivery whose place is later: again in the line when near, else parked (its relay time
   * postponed to a little after its time, so no relay takes it before).
   */
  async function waitForPlace(delivery: Delivery & { place: number }, dueAt: number, signal: AbortSignal): Promise<LineStep<Delivery, DeliveryReport>> {
    const now = Date.now();
    const turn = turnOf(delivery.accountId, dueAt, now);
    if (dueAt - now <= NEAR_WAIT_MS) return { again: { runAt: dueAt, data: delivery, priority: turn } };
    return done(await park(delivery, dueAt, 'paced', signal));
  }

  /** Parks `delivery` until `dueAt` (writes.park), and reports it queued. */
  async function park(delivery: Delivery, dueAt: number, reason: 'paced' | 'waiting-for-room', signal: AbortSignal): Promise<DeliveryReport> {
    const at = Math.round(dueAt); // to the ms, as the report and the job's id show it
    await untilDone('parking', () => writes.park.submit({ delivery, dueAt: at, reason }), signal, log, { deliveryId: delivery.id });
    return reportOf(delivery, 'queued', { due_at: new Date(at).toISOString() });
  }

  async function expire(delivery: Delivery, signal: AbortSignal) {
    await untilDone('expiry', () => writes.expire.submit(delivery.id), signal, log, { deliveryId: delivery.id });
    metrics.deliveries.inc({ outcome: 'expired' });
    return reportOf(delivery, 'expired');
  }

  /**
   * A claim that came too late for its departure asks the gate for another at once, keeping its
   * place and its claim: a departure within LATE_DEPARTURE_MS is taken (the claim is held that
   * much longer, as it is for its lead). Undefined when none comes that soon (a slow target's
   * next time is later) or the gate does not answer within that time (Redis away: a claim is
   * not held while the pacer waits for it): the claim is given back then.
   */
  async function departureAgain(delivery: Delivery): Promise<Departure | undefined> {
    const newConnection = poster.needsConnection(delivery.targetUrl);
    const answer = passGate(pacer, delivery, settings, { newConnection, leadMs: 0, soonMs: LATE_DEPARTURE_MS }).catch((error: unknown) => {
      log.warn({ err: error, deliveryId: delivery.id }, 'no second departure for a late claim; giving it back');
      return undefined;
    });
    const gated = await Promise.race([answer, sleep(LATE_DEPARTURE_MS).then(() => undefined)]);
    return gated?.kind === 'go' ? departureOf(gated) : undefined;
  }

  const paceOf = (delivery: Delivery) => delivery.maxPerSecond ?? settings.ratePerTarget;
  /** Whether `delivery` would leave now too late for `departure`: only at a target held to its departures' times. */
  const isLate = (delivery: Delivery, departure: Departure) => heldToDepartureTimes(paceOf(delivery)) && Date.now() > departure.at + LATE_DEPARTURE_MS;

  /**
   * Tells the pacer when the POST of `departure` starts later than it allowed, or a handshake's
   * departure sooner (startOffsetMs, from the soonest the departure may have been; tellsStart), so
   * the departures after it are spaced from when it really left. Not awaited: the POST goes on.
   * Nothing to tell for a target paced faster than any receiver counts (heldToDepartureTimes).
   */
  const noteStart = (delivery: Delivery, departure: Departure) => {
    const perSecond = paceOf(delivery);
    if (!heldToDepartureTimes(perSecond)) return undefined;
    return () => {
      const byMs = startOffsetMs(departure.soonestAt, departure.granted.forHandshake, Date.now());
      if (!tellsStart(departure.granted, byMs)) return;
      if (byMs > 0) metrics.lateStarts.inc();
      pacer
        .startedOffTime(delivery.targetUrl, perSecond, departure.granted, byMs)
        .catch((error: unknown) => log.warn({ err: error, deliveryId: delivery.id, byMs }, 'could not tell the pacer when a POST started'));
    };
  };

  /**
   * Claims and sends `delivery` (holding its place) at the departure granted; `posted()` is called
   * as soon as the POST is over (it no longer counts as in flight). Answers 'late' when the claim
   * came too late for that departure and for a second one (departureAgain): it is given back,
   * nothing sent, and the delivery passes the gate again. Else its report, once recorded.
   */
  async function send(delivery: Delivery, departure: Departure, signal: AbortSignal, posted: () => void): Promise<'late' | Promise<DeliveryReport>> {
    const deliveryId = delivery.id;
    const claiming = Date.now();
    const claimed = await writes.claim.submit(deliveryId);
    claimLead.observe(Date.now() - claiming);
    if (!claimed) return Promise.resolve(dropIfUnclaimable(delivery));
    const context = { deliveryId, eventId: claimed.event_id, hookId: claimed.hook_id };
    const tooLate = () => isLate(delivery, departure);
    if (tooLate()) {
      metrics.lateDepartures.inc();
      departure = (await departureAgain(delivery)) ?? departure;
    }
    // Claimed a moment early (claimLead): the POST leaves by its departure, not a commit later,
    // and as soon as the claim is in when the gate let it (`from`).
    if (departure.from > Date.now()) await sleep(departure.from - Date.now());
    if (tooLate()) {
      await untilDone('giving a claim back', () => writes.giveBack.submit({ deliveryId, token: claimed.claim_token }), signal, log, context);
      return 'late';
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': DELIVERY_USER_AGENT,
      ...signatureHeaders(openSecret(claimed.secret, secretsKey), claimed.event_id, claimed.body, Date.now() / 1000),
    };
    const answer = await poster.post(claimed.target_url, claimed.body, headers, noteStart(delivery, departure));
    posted();
    metrics.deliveryWait.observe((claimed.attempted_at.getTime() - claimed.queued_at.getTime()) / 1000);
    if (answer.kind === 'response' && isThrottled(answer.status)) {
      metrics.throttled.inc();
      const holdMs = retryAfterMs(answer.retryAfter, Date.now());
      await untilDone('target hold', () => pacer.hold(claimed.target_url, holdMs), signal, log, context);
    }
    const outcome = toOutcome(answer);
    // Recorded while the next delivery already runs in this one's place: the outcome's commit is
    // shared with others' (group commit). settled() waits for every one at shutdown.
    const recorded = (async () => {
      await untilDone('recording', () => writes.record.submit({ deliveryId, ...outcome }), signal, log, context);
      if (answer.kind === 'response' && answer.status === 410) {
        await store.hooks
          .deleteGone(claimed.hook_id)
          .catch((error: unknown) => log.error({ err: error, ...context }, 'could not delete a hook its target called gone'));
      }
      metrics.deliveries.inc({ outcome: outcome.status });
      metrics.deliveryDuration.observe(answer.durationMs / 1000);
      log.info({ ...context, outcome: outcome.status, responseStatus: outcome.responseStatus, ms: answer.durationMs }, 'delivery');
      return reportOf(delivery, outcome.status, {
        response_status: outcome.responseStatus ?? null,
        duration_ms: outcome.durationMs,
        ...(outcome.error !== undefined && { error: outcome.error }),
      });
    })();
    recording.add(recorded);
    recorded.then(
      () => recording.delete(recorded),
      (error: unknown) => {
        recording.delete(recorded);
        log.error({ err: error, ...context, outcome: outcome.status }, 'could not record an outcome before shutdown; the claim will end unknown');
      },
    );
    return recorded;
  }

  /** A delivery its claim did not get: claimed already (another run of it), or its subscription or key is gone, and then dropped. */
  async function dropIfUnclaimable(delivery: Delivery): Promise<DeliveryReport> {
    const dropped = await writes.drop.submit(delivery.id);
    return reportOf(delivery, dropped ? 'dropped' : 'already_claimed');
  }

  /**
   * Whether `delivery` takes its place in its target's line before it takes in-flight room: a new
   * one to a paced target. Placing grants no departure, so it needs no room, and a paced backlog
   * is placed (the most of it parked) as fast as the gate answers, not at its in-flight cap's pace.
   */
  const placesFirst = (delivery: Delivery) => delivery.place === undefined && heldToDepartureTimes(paceOf(delivery));

  /** Takes `delivery`'s place at its gate: it comes back in the line then (parked, when later than NEAR_WAIT_MS). */
  async function place(delivery: Delivery, signal: AbortSignal): Promise<LineStep<Delivery, DeliveryReport>> {
    const ask = { newConnection: poster.needsConnection(delivery.targetUrl), leadMs: claimLead.ms, soonMs: PLACE_ONLY_MS };
    const placed = await untilDone('pacing', () => passGate(pacer, delivery, settings, ask), signal, log, { deliveryId: delivery.id });
    if (placed.kind === 'expired') return done(await expire(delivery, signal));
    if (placed.kind === 'wait') return waitForPlace(placed.delivery, placed.dueAt, signal);
    throw new Error('the gate granted a departure asked for a place only');
  }

  // The line runs this once the delivery has room under its in-flight caps (inFlight.ts), so a
  // departure granted at the gate is one this process can make at once; a delivery placing itself
  // (placesFirst) runs without.
  const deliver: LineHandler<Delivery, DeliveryReport> = async (delivery, signal, release) => {
    if (placesFirst(delivery)) return place(delivery, signal);
    const newConnection = poster.needsConnection(delivery.targetUrl);
    const lead = claimLead.ms;
    const gated = await untilDone('pacing', () => passGate(pacer, delivery, settings, { newConnection, leadMs: lead }), signal, log, {
      deliveryId: delivery.id,
    });
    if (gated.kind !== 'go') release(); // nothing is sent now: its room goes to the next at once
    if (gated.kind === 'expired') return done(await expire(delivery, signal));
    if (gated.kind === 'wait') return waitForPlace(gated.delivery, gated.dueAt, signal);
    // A departure granted a moment ahead is waited for here, unclaimed (a crash now loses
    // nothing) but for the last moment, the lead, in which the claim commits.
    const departure = departureOf(gated);
    if (gated.inMs > lead) await sleep(gated.inMs - lead);
    const late = isLate(gated.delivery, departure);
    if (late) metrics.lateDepartures.inc();
    const sent = late ? 'late' : await send(gated.delivery, departure, signal, release);
    return sent === 'late' ? { again: { runAt: Date.now(), data: gated.delivery } } : done(sent);
  };

  return {
    deliver,
    /** Whether the line must give `delivery` in-flight room before it runs (all but one placing itself). */
    needsRoom: (delivery: Delivery) => !placesFirst(delivery),
    /**
     * Parks a delivery whose in-flight room is stuck (its account's or target's POSTs hang): it
     * comes back in NEAR_WAIT_MS, twice that the next time, and so on up to a minute, so that a
     * hung account's backlog costs little while it waits.
     */
    leaveLine: (delivery: Delivery) => {
      const roomWaits = (delivery.roomWaits ?? 0) + 1;
      const backOff = NEAR_WAIT_MS * 2 ** Math.min(roomWaits - 1, LONGEST_ROOM_BACK_OFF_DOUBLINGS);
      return park({ ...delivery, roomWaits }, Date.now() + backOff, 'waiting-for-room', stopping);
    },
    /** Resolves once every outcome of a POST made is recorded, and every write submitted is done. */
    async settled() {
      while (recording.size > 0) await Promise.allSettled(recording);
      await writes.settled();
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
