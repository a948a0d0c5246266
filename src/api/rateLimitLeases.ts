import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { RedisClient } from '../queue/redisConnection.js';

/**
 * A lease is at most this share of what is left of a key's minute, and at most LEASE_MOST
 * requests. What a web process holds and does not spend is refused to the others until the
 * window ends, so a lease stays small beside what is left: while fewer than 64 of a key's
 * requests are left, each is counted on its own, exactly as a call per request would count it.
 */
const LEASE_SHARE = 32;
const LEASE_MOST = 64;

/**
 * Takes up to a lease of requests from a key's count for the window: a share of what is left,
 * at least one while anything is. A count new (or found without expiry) starts its window now.
 * Returns the requests granted, the count after them, and the window's milliseconds left.
 */
const LEASE = `
local window, max, most, share = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local counted = tonumber(redis.call('GET', KEYS[1]) or '0')
local granted = 0
if counted < max then
  granted = math.max(1, math.min(most, math.floor((max - counted) / share)))
  counted = redis.call('INCRBY', KEYS[1], granted)
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return {granted, counted, ttl}
`;

type LeasingRedis = RedisClient & {
  rateLimitLease(key: string, windowMs: number, max: number, most: number, share: number): Promise<[number, number, number]>;
};

/** A process's part of one key's window: requests it may still let through, of the count `counted`. */
interface Lease {
  left: number;
  counted: number;
  endsAt: number;
}

type Counted = { current: number; ttl: number };

/**
 * The API rate limit's store for @fastify/rate-limit, shared through Redis without a Redis call
 * per request: each web process takes requests from a key's count in Redis a lease at a time and
 * lets them through locally. Together the processes never let more than the limit through in a
 * window; a process holding requests it does not use can only make the others refuse early,
 * by at most its lease. Once Redis has no room left for a key, the process refuses the key
 * locally until the window ends (no lease comes back within a window, so none can open again).
 */
class LeasedStore implements FastifyRateLimitStore {
  private readonly leases = new Map<string, Lease>();
  // One lease taken at a time per key: requests that arrive meanwhile wait for it.
  private readonly renewing = new Map<string, Promise<void>>();
  private sweepAt = 0;

  constructor(
    private readonly redis: LeasingRedis,
    private readonly prefix: string,
  ) {}

  incr(key: string, callback: (error: Error | null, result?: Counted) => void, windowMs: number, max: number) {
    this.count(key, windowMs, max).then(
      (counted) => callback(null, counted),
      (error: Error) => callback(error),
    );
  }

  /**
   * A route with a limit of its own counts apart, as the plugin's own Redis store does it. The
   * plugin hands over its params with the route as `routeInfo`, whatever its types say.
   */
  child(params: Parameters<FastifyRateLimitStore['child']>[0]) {
    const { routeInfo } = params as unknown as { routeInfo: { method?: string; url?: string } };
    return new LeasedStore(this.redis, `${this.prefix}${routeInfo.method}${routeInfo.url}-`);
  }

  private async count(key: string, windowMs: number, max: number): Promise<Counted> {
    for (;;) {
      const now = Date.now();
      this.sweep(now, windowMs);
      const lease = this.leases.get(key);
      if (lease && lease.endsAt > now) {
        const ttl = lease.endsAt - now;
        if (lease.left > 0) {
          lease.left--;
          return { current: lease.counted - lease.left, ttl };
        }
        if (lease.counted >= max) return { current: max + 1, ttl };
      }
      await this.renew(key, windowMs, max);
    }
  }

  private renew(key: string, windowMs: number, max: number) {
    let pending = this.renewing.get(key);
    if (!pending) {
      pending = this.redis
        .rateLimitLease(this.prefix + key, windowMs, max, LEASE_MOST, LEASE_SHARE)
        .then(([granted, counted, ttl]) => {
          this.leases.set(key, { left: granted, counted, endsAt: Date.now() + ttl });
        })
        .finally(() => this.renewing.delete(key));
      this.renewing.set(key, pending);
    }
    return pending;
  }

  /** Windows that ended are forgotten, a window's length after the last sweep at most. */
  private sweep(now: number, windowMs: number) {
    if (now < this.sweepAt) return;
    this.sweepAt = now + windowMs;
    for (const [key, lease] of this.leases) if (lease.endsAt <= now) this.leases.delete(key);
  }
}

/** The store's constructor, as the plugin takes it, counting on `redis` under `nameSpace`. */
export function leasedRateLimitStore(redis: RedisClient, nameSpace: string): FastifyRateLimitStoreCtor {
  const leasing = redis as LeasingRedis;
  leasing.defineCommand('rateLimitLease', { numberOfKeys: 1, lua: LEASE });
  return class extends LeasedStore {
    constructor() {
      super(leasing, nameSpace);
    }
  };
}
