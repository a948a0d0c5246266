import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { DeliveryHandoff, HandedDelivery } from './handoff.js';
import { bullPrefix, connectRedis, serversOf, type RedisSettings } from './redisConnection.js';

/** The list of handed deliveries: under the queues' hash tag, so on a cluster it sits in their slot. */
export const handoffKeyOf = (prefix: string) => `${bullPrefix(prefix)}:handoff`;
/** The channel workers subscribe to: older web processes ring it when events wait in the outbox. */
const channelOf = (prefix: string) => `${prefix}:new-events`;
/**
 * The list keeps at most this many: with no worker taking them, the oldest are overdue anyway
 * and the relay sends them from the database.
 */
const MOST_KEPT = 50_000;
/** A worker's pop waits this long (seconds) for deliveries before it looks at its room again. */
const POP_WAIT_S = 1;
/** When the worker's local queue has no room, it looks again this soon. */
const FULL_RETRY_MS = 50;
/** After a failed pop (Redis away), the next one waits this long. */
const POP_RETRY_MS = 1_000;

/** A handed delivery, as the list holds it: its lease ends in the web's clock, from when it is handed. */
interface Listed extends Omit<HandedDelivery, 'queued_at'> {
  queued_at: number;
  lease_ends: number;
}

/**
 * The web process's side: pushes the deliveries its statements committed onto one list, failing
 * fast when Redis is away (requests never wait on it; the relay sends those deliveries once
 * their lease ends). `waiting` counts those no worker has taken yet. `listening` counts the
 * workers subscribed to the new-events channel (PUBSUB NUMSUB): a worker's subscription ends
 * with its connection, so none listening means no worker is running. A cluster carries a
 * publish to every node, but each node counts only the subscribers connected to it, so the
 * count is the sum over all of them.
 */
export function createRedisHandoff({ target, prefix }: RedisSettings, leaseMs: number, log: Logger): DeliveryHandoff & { listening(): Promise<number>; waiting(): Promise<number> } {
  const redis = connectRedis(target, 'fails-fast');
  redis.on('error', (error) => log.warn({ err: error }, 'delivery handoff: Redis unavailable; the relay sends new deliveries after their lease'));
  const key = handoffKeyOf(prefix);
  const channel = channelOf(prefix);
  return {
    handOff(deliveries) {
      if (deliveries.length === 0) return;
      const lease_ends = Date.now() + leaseMs;
      const handed = deliveries.map(({ delivery_id, account_id, target_url, max_per_second, queued_at }): string =>
        JSON.stringify({ delivery_id, account_id, target_url, max_per_second, queued_at: queued_at.getTime(), lease_ends } satisfies Listed),
      );
      redis
        .multi()
        .rpush(key, ...handed)
        .ltrim(key, -MOST_KEPT, -1)
        .exec()
        .catch((error: unknown) => log.debug({ err: error, deliveries: deliveries.length }, 'deliveries not handed to a worker; the relay sends them after their lease'));
    },
    ping: async () => {
      await redis.ping();
    },
    /** How many handed deliveries no worker has taken yet (some may be past their lease). */
    waiting: () => redis.llen(key),
    listening: async () => {
      const counts = await Promise.all(serversOf(redis).map(async (server) => ((await server.pubsub('NUMSUB', channel)) as [string, number])[1]));
      return counts.reduce((sum, count) => sum + count, 0);
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

/** What a worker's engine offers the handoff: how many it has room for, and where they go. */
export interface HandoffTaker {
  room(): number;
  take(deliveries: HandedDelivery[]): void;
}

/**
 * A worker's side: pops handed deliveries, as many as its engine has room for, and gives them to
 * it; waits for Redis when it is away. One whose lease has ended is dropped: the relay has it.
 * (Were it kept, the claim would still allow it one POST; dropping it spares its gate a place.)
 * A worker that dies holding popped deliveries loses none: their lease ends, and the relay
 * sends them.
 */
export function receiveHandoffs({ target, prefix }: RedisSettings, taker: HandoffTaker, log: Logger) {
  const redis = connectRedis(target, 'waits');
  redis.on('error', (error) => log.warn({ err: error }, 'delivery handoff: waiting for Redis; the relay sends what was handed meanwhile'));
  const key = handoffKeyOf(prefix);
  let stopped = false;

  async function popAll() {
    while (!stopped) {
      const room = taker.room();
      if (room === 0) {
        await sleep(FULL_RETRY_MS);
        continue;
      }
      try {
        const popped = await redis.blmpop(POP_WAIT_S, 1, key, 'LEFT', 'COUNT', room);
        if (popped) taker.take(leased(popped[1], log));
      } catch (error) {
        if (stopped) return;
        log.warn({ err: error }, 'delivery handoff: pop failed; trying again');
        await sleep(POP_RETRY_MS);
      }
    }
  }

  const popping = popAll();
  return {
    async close() {
      stopped = true;
      redis.disconnect();
      await popping;
    },
  };
}

/** The handed deliveries still within their lease. */
function leased(entries: string[], log: Pick<Logger, 'info'>): HandedDelivery[] {
  const now = Date.now();
  const taken: HandedDelivery[] = [];
  for (const entry of entries) {
    const { lease_ends, queued_at, ...delivery } = JSON.parse(entry) as Listed;
    if (lease_ends > now) taken.push({ ...delivery, queued_at: new Date(queued_at) });
  }
  if (taken.length < entries.length) log.info({ dropped: entries.length - taken.length }, 'handed deliveries past their lease dropped; the relay sends them');
  return taken;
}

/** A worker's subscription to the new-events channel: rung by older web processes, and it shows the worker is running. */
export function listenForNewEvents({ target, prefix }: RedisSettings, listener: () => void, log: Logger) {
  const redis = connectRedis(target, 'waits');
  redis.on('error', (error) => log.warn({ err: error }, 'new-events signal: waiting for Redis; fan-out polls meanwhile'));
  redis.on('message', listener);
  void redis.subscribe(channelOf(prefix)).catch((error: unknown) => log.warn({ err: error }, 'could not subscribe to the new-events signal'));
  return {
    close: async () => {
      redis.disconnect();
    },
  };
}
