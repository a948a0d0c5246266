import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { envelopeBody } from '../domain/events.js';
import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Metrics } from '../observability/metrics.js';
import { RELAY_GRACE_MS, type Delivery, type DeliveryJobData } from '../domain/delivery.js';
import type { JobQueue } from '../queue/jobQueue.js';
import type { ClaimedDelivery, DeliveryOutcome } from '../storage/deliveries.js';
import type { Store } from '../storage/store.js';
import { groupCommit } from '../storage/groupCommit.js';
import { reportDisabled } from './hookDisables.js';
import { untilDone } from './retry.js';

/** A claimed delivery with the body it is sent with. */
export type SendableDelivery = ClaimedDelivery & { body: string };

const nothing = <T>(items: T[]) => items.map(() => undefined);

/** Where parked deliveries wait: the `deliveries` queue, and whether it keeps them across a restart. */
export interface Parking {
  queue: JobQueue<DeliveryJobData>;
  /** BullMQ on Redis keeps delayed jobs; the embedded process's queue holds them in memory only. */
  keepsDelayedJobs: boolean;
}

/** A delivery to park until `dueAt` (epoch ms, whole), and why (the job's name). */
export interface ToPark {
  delivery: Delivery;
  dueAt: number;
  reason: 'paced' | 'waiting-for-room';
}

/**
 * In a queue that keeps nothing across a restart, waits up to this long are its delayed jobs. A
 * longer one is left to the relay, which adds the delivery again when its time comes: a paced
 * backlog of hours then holds no memory.
 */
const LONGEST_WAIT_IN_MEMORY_MS = 60_000;

/**
 * Claims per statement, at most. Every POST of a claim batch waits for its whole statement, so
 * after a stall a process with hundreds of deliveries ready would claim them all in one long
 * statement and send them all late together; batches of this many let the first leave while
 * the next are claimed.
 */
const CLAIMS_PER_STATEMENT = 64;

/**
 * The engine's writes, each a group commit (groupCommit.ts): the claims, claims given back,
 * outcomes, drops, expiries and parkings of concurrent deliveries share one statement and one
 * commit, and the jobs of the deliveries parked share one call. Recording outcomes also keeps
 * their hooks' health, and disables a hook `health.rule` says to, in the same statement.
 */
export function createDeliveryWrites(store: Store, parking: Parking, log: Logger, stopping: AbortSignal, health: { rule: HookDisableRule; metrics: Metrics }) {
  const { deliveries, urgentDeliveries } = store;
  const writes = {
    /**
     * A batch is claimed under one token, retried with that token until it commits: a claim
     * whose answer was lost with the connection is found again as ours, never lost. The body of
     * each event is built once per batch, whatever number of subscriptions it goes to.
     */
    claim: groupCommit(async (ids: string[]): Promise<(SendableDelivery | undefined)[]> => {
      const token = randomUUID();
      const rows = await untilDone('claim', () => urgentDeliveries.claim(ids, token), stopping, log, { deliveries: ids.length });
      const bodies = new Map<string, string>();
      const claimed = new Map<string, SendableDelivery>();
      for (const row of rows) {
        let body = bodies.get(row.event_id);
        if (body === undefined) bodies.set(row.event_id, (body = envelopeBody(row.event_type, row.data)));
        claimed.set(row.delivery_id, { ...row, body });
      }
      // A delivery asked for twice in one batch is claimed once: by the first to ask.
      return ids.map((id) => {
        const row = claimed.get(id);
        claimed.delete(id);
        return row;
      });
    }, CLAIMS_PER_STATEMENT),
    record: groupCommit(async (outcomes: (DeliveryOutcome & { deliveryId: string })[]) => {
      reportDisabled(await deliveries.record(outcomes, health.rule), log, health.metrics);
      return nothing(outcomes);
    }),
    /** Claims that came too late for their departure, given back unsent. */
    giveBack: groupCommit(async (claims: { deliveryId: string; token: string }[]) => {
      await urgentDeliveries.giveBack(claims);
      return nothing(claims);
    }),
    expire: groupCommit(async (ids: string[]) => {
      await deliveries.expire(ids);
      return nothing(ids);
    }),
    /**
     * Deliveries that could not be claimed, dropped if their subscription or key is gone. A relay
     * hands a worker a burst of copies that another worker already sent; one statement each ran
     * them all at once and opened a connection per copy, up to the whole pool.
     */
    drop: groupCommit(async (ids: string[]) => {
      const dropped = new Set(await deliveries.dropUnclaimable(ids));
      return ids.map((id) => dropped.has(id));
    }),
    /**
     * Parks deliveries until their time: the relay leaves each alone until a little after it (its
     * place kept for it), and its job of the `deliveries` queue brings it back then. A wait too
     * long to hold in memory is left to the relay alone.
     */
    park: groupCommit(async (entries: ToPark[]) => {
      const now = Date.now();
      const queued = entries.filter((entry) => parking.keepsDelayedJobs || entry.dueAt - now <= LONGEST_WAIT_IN_MEMORY_MS);
      const inQueue = new Set(queued);
      await deliveries.postpone(
        entries.map((entry) => ({
          deliveryId: entry.delivery.id,
          relayAt: entry.dueAt + (inQueue.has(entry) ? RELAY_GRACE_MS : 0),
          place: entry.delivery.place ?? null,
        })),
      );
      await parking.queue.add(
        queued.map(({ delivery, dueAt, reason }) => ({
          id: `${delivery.id}.${dueAt}`,
          name: reason,
          data: {
            delivery_id: delivery.id,
            event_id: delivery.eventId,
            hook_id: delivery.hookId,
            account_id: delivery.accountId,
            due_at: dueAt,
            ...(delivery.roomWaits && { room_waits: delivery.roomWaits }),
          },
          runAt: dueAt,
        })),
      );
      return nothing(entries);
    }),
  };
  return {
    ...writes,
    /** Resolves once every write submitted so far is done: at shutdown, after the last delivery. */
    async settled() {
      await Promise.all([writes.claim, writes.giveBack, writes.record, writes.drop, writes.expire, writes.park].map((write) => write.settled()));
    },
  };
}
