import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { createClaimLead, heldToDepartureTimes, LATE_DEPARTURE_MS, startOffsetMs, tellsStart, type GrantedDeparture } from '../domain/pacing.js';
import { isThrottled, retryAfterMs } from '../domain/throttling.js';
import { createTurnCounter } from '../domain/turns.js';
import { RELAY_GRACE_MS } from '../domain/delivery.js';
import { openSecret } from '../domain/secretBox.js';
import { signatureHeaders } from '../domain/signature.js';
import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Metrics } from '../observability/metrics.js';
import type { DelayQueue } from '../queue/jobQueue.js';
import type { LocalJobHandler } from '../queue/localQueue.js';
import type { DeliveryOutcome } from '../storage/deliveries.js';
import type { Store } from '../storage/store.js';
import { createDeliveryWrites } from './deliveryWrites.js';
import type { DeliveryJob } from './jobs.js';
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
  /** Where a delivery waiting longer than NEAR_WAIT_MS is kept (BullMQ); absent: it waits on a timer here. */
  delayQueue: DelayQueue<DeliveryJob> | undefined;
  /** Aborts at shutdown: the engine's retried writes stop then. */
  stopping: AbortSignal;
  /** When recording outcomes disables a hook (HOOK_DISABLE_AFTER, HOOK_DISABLE_MIN_FAILURES). */
  disableRule: HookDisableRule;
}

/**
 * A wait up to this long is spent on a timer in this process. A longer one is handed to the
 * delay queue (it survives this process), and the relay is told to leave the delivery alone
 * until a little after its time.
 */
const NEAR_WAIT_MS = 1_000;
/**
 * Without a delay queue (embedded), waits up to this long are timers in the process too. A
 * longer one is left to the relay, which hands the delivery back when its time comes: a paced
 * backlog of hours then holds no memory, and never fills the local queue against other accounts.
 */
const LONGEST_WAIT_IN_PROCESS_MS = 60_000;

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

/**
 * The one delivery handler, in every worker's and the embedded process's local queue. A delivery
 * passes its target's gate (or waits for its place there, holding no worker), then is claimed
 * and sent at once: the claim (queued -> sending, once) is the last step before the POST, so a
 * crash can only leave `sending` what was on the wire, and every delivery only waiting goes
 * back to the line. The claim keeps delivery at most once however often this runs. A 429 or
 * 503 is recorded as failed, never retried, and holds the target for its Retry-After.
 */
export function createDeliverer(deps: DelivererDeps): { deliver: LocalJobHandler<DeliveryJob>; settled(): Promise<void> } {
  const { store, pacer, poster, settings, metrics, log, secretsKey, delayQueue, stopping } = deps;
  const writes = createDeliveryWrites(store, delayQueue, log, stopping, { rule: deps.disableRule, metrics });
  const turnOf = createTurnCounter();
  const recording = new Set<Promise<void>>();
  const claimLead = createClaimLead();

  /** A delivery whose place is later: a timer here when near, else the delay queue, else the relay. */
  async function waitForPlace(job: DeliveryJob & { dueAt: number; place: number }, signal: AbortSignal) {
    const now = Date.now();
    const waiting = { ...job, turn: turnOf(job.accountId, job.dueAt, now) };
    const onTimer = { runAt: job.dueAt, data: waiting, priority: waiting.turn };
    if (job.dueAt - now <= NEAR_WAIT_MS) return onTimer;
    const held = writes.park !== undefined || job.dueAt - now <= LONGEST_WAIT_IN_PROCESS_MS;
    const relayAt = job.dueAt + (held ? RELAY_GRACE_MS : 0);
    const context = { deliveryId: job.deliveryId };
    await untilDone('postponing', () => writes.postpone.submit({ deliveryId: job.deliveryId, relayAt, place: job.place }), signal, log, context);
    if (writes.park) {
      await untilDone('parking', () => writes.park!.submit({ id: `${job.deliveryId}.${job.place}`, data: waiting, runAt: job.dueAt }), signal, log, context);
      return;
    }
    if (held) return onTimer;
  }

  async function expire(deliveryId: string, signal: AbortSignal) {
    await untilDone('expiry', () => writes.expire.submit(deliveryId), signal, log, { deliveryId });
    metrics.deliveries.inc({ outcome: 'expired' });
  }

  /**
   * A claim that came too late for its departure asks the gate for another at once, keeping its
   * place and its claim: a departure within LATE_DEPARTURE_MS is taken (the claim is held that
   * much longer, as it is for its lead). Undefined when none comes that soon (a slow target's
   * next time is later) or the gate does not answer within that time (Redis away: a claim is
   * not held while the pacer waits for it): the claim is given back then.
   */
  async function departureAgain(job: DeliveryJob): Promise<Departure | undefined> {
    const newConnection = poster.needsConnection(job.targetUrl);
    const answer = passGate(pacer, job, settings, { newConnection, leadMs: 0, soonMs: LATE_DEPARTURE_MS }).catch((error: unknown) => {
      log.warn({ err: error, deliveryId: job.deliveryId }, 'no second departure for a late claim; giving it back');
      return undefined;
    });
    const gated = await Promise.race([answer, sleep(LATE_DEPARTURE_MS).then(() => undefined)]);
    return gated?.kind === 'go' ? departureOf(gated) : undefined;
  }

  const paceOf = (job: DeliveryJob) => job.maxPerSecond ?? settings.ratePerTarget;
  /** Whether `job` would leave now too late for `departure`: only at a target held to its departures' times. */
  const isLate = (job: DeliveryJob, departure: Departure) => heldToDepartureTimes(paceOf(job)) && Date.now() > departure.at + LATE_DEPARTURE_MS;

  /**
   * Tells the pacer when the POST of `departure` starts later than it allowed, or a handshake's
   * departure sooner (startOffsetMs, from the soonest the departure may have been; tellsStart), so
   * the departures after it are spaced from when it really left. Not awaited: the POST goes on.
   * Nothing to tell for a target paced faster than any receiver counts (heldToDepartureTimes).
   */
  const noteStart = (job: DeliveryJob, departure: Departure) => {
    const perSecond = paceOf(job);
    if (!heldToDepartureTimes(perSecond)) return undefined;
    return () => {
      const byMs = startOffsetMs(departure.soonestAt, departure.granted.forHandshake, Date.now());
      if (!tellsStart(departure.granted, byMs)) return;
      if (byMs > 0) metrics.lateStarts.inc();
      pacer
        .startedOffTime(job.targetUrl, perSecond, departure.granted, byMs)
        .catch((error: unknown) => log.warn({ err: error, deliveryId: job.deliveryId, byMs }, 'could not tell the pacer when a POST started'));
    };
  };

  /**
   * Claims and sends `job` (holding its place) at the departure granted; `posted()`
   * is called as soon as the POST is over (it no longer counts as in flight). Says 'late' when
   * the claim came too late for that departure and for a second one (departureAgain): it is
   * given back, nothing sent, and the delivery passes the gate again.
   */
  async function send(job: DeliveryJob, departure: Departure, signal: AbortSignal, posted: () => void): Promise<'late' | void> {
    const { deliveryId } = job;
    const claiming = Date.now();
    const claimed = await writes.claim.submit(deliveryId);
    claimLead.observe(Date.now() - claiming);
    if (!claimed) {
      // Claimed already (a repeated job), or its subscription or key is gone: then drop it.
      await writes.drop
        .submit(deliveryId)
        .catch((error: unknown) => log.warn({ err: error, deliveryId }, 'could not drop an unclaimable delivery; the relay will try it again'));
      return;
    }
    const context = { deliveryId, eventId: claimed.event_id, hookId: claimed.hook_id };
    const tooLate = () => isLate(job, departure);
    if (tooLate()) {
      metrics.lateDepartures.inc();
      departure = (await departureAgain(job)) ?? departure;
    }
    // Claimed a moment early (claimLead): the POST leaves by its departure, not a commit later,
    // and as soon as the claim is in when the gate let it (`from`).
    if (departure.from > Date.now()) await sleep(departure.from - Date.now());
    if (tooLate()) {
      await untilDone('giving a claim back', () => store.urgentDeliveries.giveBack(deliveryId, claimed.claim_token), signal, log, context);
      return 'late';
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'contact-hooks/1.0',
      ...signatureHeaders(openSecret(claimed.secret, secretsKey), claimed.event_id, claimed.body, Date.now() / 1000),
    };
    const answer = await poster.post(claimed.target_url, claimed.body, headers, noteStart(job, departure));
    posted();
    metrics.deliveryWait.observe((claimed.attempted_at.getTime() - claimed.queued_at.getTime()) / 1000);
    if (answer.kind === 'response' && isThrottled(answer.status)) {
      metrics.throttled.inc();
      const holdMs = retryAfterMs(answer.retryAfter, Date.now());
      await untilDone('target hold', () => pacer.hold(claimed.target_url, holdMs), signal, log, context);
    }
    const outcome = toOutcome(answer);
    // Recorded while the next delivery already runs in this one's place: the outcome's commit is
    // shared with others' (group commit), and the local queue need not wait for it. settled()
    // waits for every one at shutdown.
    const recorded = (async () => {
      await untilDone('recording', () => writes.record.submit({ deliveryId, ...outcome }), signal, log, context);
      if (answer.kind === 'response' && answer.status === 410) {
        await store.hooks.deleteGone(claimed.hook_id).catch((error: unknown) => log.error({ err: error, ...context }, 'could not delete a hook its target called gone'));
      }
      metrics.deliveries.inc({ outcome: outcome.status });
      metrics.deliveryDuration.observe(answer.durationMs / 1000);
      log.info({ ...context, outcome: outcome.status, responseStatus: outcome.responseStatus, ms: answer.durationMs }, 'delivery');
    })()
      .catch((error: unknown) => log.error({ err: error, ...context, outcome: outcome.status }, 'could not record an outcome before shutdown; the claim will end unknown'))
      .finally(() => recording.delete(recorded));
    recording.add(recorded);
  }

  // The local queue runs this once the delivery has room under its in-flight caps (inFlight.ts),
  // so a departure granted at the gate is one this process can make at once.
  const deliver: LocalJobHandler<DeliveryJob> = async (job, signal, release) => {
    // Woken a moment early (the delay queue wakes jobs early on purpose): wait the rest here.
    if (job.dueAt !== undefined && job.dueAt > Date.now()) return { runAt: job.dueAt, data: job };
    const newConnection = poster.needsConnection(job.targetUrl);
    const lead = claimLead.ms;
    const gated = await untilDone('pacing', () => passGate(pacer, job, settings, { newConnection, leadMs: lead }), signal, log, { deliveryId: job.deliveryId });
    if (gated.kind === 'expired') return expire(job.deliveryId, signal);
    if (gated.kind === 'wait') return waitForPlace(gated.job, signal);
    // A departure granted a moment ahead is waited for here, unclaimed (a crash now loses
    // nothing) but for the last moment, the lead, in which the claim commits.
    const departure = departureOf(gated);
    if (gated.inMs > lead) await sleep(gated.inMs - lead);
    const late = isLate(gated.job, departure);
    if (late) metrics.lateDepartures.inc();
    if (late || (await send(gated.job, departure, signal, release)) === 'late') return { runAt: Date.now(), data: gated.job };
  };
  return {
    deliver,
    /** Resolves once every outcome of a POST made is recorded, and every write submitted is done. */
    async settled() {
      while (recording.size > 0) await Promise.all(recording);
      await writes.settled();
    },
  };
}
