import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { IDLE_CONNECTION_MS, NEW_CONNECTION_ALLOWANCE_MS, paceLimits, SOON_MS } from '../domain/pacing.js';
import { connectRedis, type RedisClient, type RedisSettings } from '../queue/redisConnection.js';
import { budgetKey, gateAnswer, type Pacer } from './pacer.js';

/**
 * passGate() of src/domain/pacing.ts in Lua, atomic across every worker. Times are integer
 * microseconds of Redis's own clock (TIME), so workers' clocks never disagree;
 * string.format('%d') keeps them exact (Lua's tostring keeps only 14 digits).
 * KEYS: the target's hash (tail, last, hold, sent) and its (account, host) budget, both under the
 * target host's hash tag, so one call's keys share a slot on a Redis Cluster.
 * ARGV: target interval, host interval, host burst, max wait, the place held from before (0: none),
 * how soon a departure is granted (SOON_MS or less), IDLE_CONNECTION_MS,
 * NEW_CONNECTION_ALLOWANCE_MS, a new connection (1) or not (0), the lead (the soonest it can
 * leave from now). Returns {at, now, place, seq, last, from}: seq and last are the target's `sent`
 * and `last` a granted departure left (seq 0: not granted, a wait); from is how soon it may leave
 * once claimed; at = -1 when no time comes within the max wait.
 */
const GATE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local lead = tonumber(ARGV[10])
local earliest = now + lead
local function us(x) return string.format('%d', x) end
local target = redis.call('HMGET', KEYS[1], 'tail', 'last', 'hold')
local tail, last, hold = tonumber(target[1]) or 0, tonumber(target[2]) or 0, tonumber(target[3]) or 0
local interval, held = tonumber(ARGV[1]), tonumber(ARGV[5])
local place, hostTat = held, 0
if held <= 0 then
  hostTat = tonumber(redis.call('GET', KEYS[2])) or 0
  place = math.max(earliest, tail, hold, hostTat - tonumber(ARGV[3]))
end
local at = math.max(place, earliest, last + interval, hold)
if at - now > tonumber(ARGV[4]) then return {'-1', us(now), '0', 0, '0', '0'} end
local from = math.max(at - lead, last + interval, hold)
if held <= 0 then
  tail = place + interval
  redis.call('HSET', KEYS[1], 'tail', us(tail))
  hostTat = math.max(hostTat, place) + tonumber(ARGV[2])
  redis.call('SET', KEYS[2], us(hostTat), 'PX', math.ceil((hostTat - now) / 1000) + 1000)
end
local seq = 0
if at <= earliest + tonumber(ARGV[6]) then
  if ARGV[9] == '1' or at - last > tonumber(ARGV[7]) then last = at + tonumber(ARGV[8]) else last = at end
  redis.call('HSET', KEYS[1], 'last', us(last))
  seq = redis.call('HINCRBY', KEYS[1], 'sent', 1)
end
-- The hash outlives its last time by a minute, then says nothing a fresh one would not.
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tail, hold, last + 2000000) - now) / 1000) + 60000)
return {us(at), us(now), us(place), seq, us(last), us(from)}
`;

/** KEYS: the target's hash. ARGV: how long to hold it. Holds only ever lengthen. */
const HOLD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local hold = math.max(tonumber(redis.call('HGET', KEYS[1], 'hold')) or 0, now + tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'hold', string.format('%d', hold))
redis.call('PEXPIRE', KEYS[1], math.ceil((hold - now) / 1000) + 60000)
return 1
`;

/**
 * startedLate() of src/domain/pacing.ts. KEYS: the target's hash. ARGV: the late departure's seq
 * and last (as the gate returned them), how late its POST started, the target interval and rate.
 */
const STARTED_LATE = `
local target = redis.call('HMGET', KEYS[1], 'last', 'sent')
local last, sent = tonumber(target[1]), tonumber(target[2])
if not last or not sent then return 0 end
local since = sent - tonumber(ARGV[1])
if since >= tonumber(ARGV[5]) then return 0 end
local moved = math.max(last, tonumber(ARGV[2]) + tonumber(ARGV[3]) + since * tonumber(ARGV[4]))
if moved == last then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('HSET', KEYS[1], 'last', string.format('%d', moved))
-- As the gate's: a minute past its last time, and never sooner than the gate left it.
local ttl = math.ceil((moved + 2000000 - now) / 1000) + 60000
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

type PacingRedis = RedisClient & {
  passGate(target: string, budget: string, ...args: string[]): Promise<[string, string, string, number, string, string]>;
  holdTarget(target: string, holdUs: string): Promise<number>;
  startedLate(target: string, seq: string, lastUs: string, byUs: string, intervalUs: string, perSecond: string): Promise<number>;
};

const US_PER_MS = 1000;
const us = (ms: number) => String(Math.round(ms * US_PER_MS));
// Keys carry a hash, not the URL: hook URLs hold the receiver's secrets (Zapier's do).
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The key names: under the prefix, tagged with the target host, so a target's keys share a slot. */
export function pacerKeys(prefix: string) {
  const tagged = (url: string) => `${prefix}:pace:{${digest(new URL(url).host)}}`;
  return {
    target: (url: string) => `${tagged(url)}:target:${digest(url)}`,
    budget: (accountId: string, url: string) => `${tagged(url)}:budget:${digest(budgetKey(accountId, url))}`,
  };
}

/**
 * The pacer of the web + workers mode: its state lives in Redis under the queue prefix, so the
 * pace holds whether one worker sends or ten. Calls made in the same tick share one round trip
 * (auto-pipelining). Like a worker, it waits for Redis when Redis is away.
 */
export function createRedisPacer(settings: RedisSettings, hostBudget: number, log: Logger): Pacer {
  const redis = connectRedis(settings.target, 'waits', { autoPipelining: true }) as PacingRedis;
  redis.on('error', (error) => log.warn({ err: error }, 'pacer connection problem; waiting for Redis'));
  redis.defineCommand('passGate', { numberOfKeys: 2, lua: GATE });
  redis.defineCommand('holdTarget', { numberOfKeys: 1, lua: HOLD });
  redis.defineCommand('startedLate', { numberOfKeys: 1, lua: STARTED_LATE });
  const keys = pacerKeys(settings.prefix);

  return {
    async gate(request) {
      const limits = paceLimits(request.perSecond, hostBudget);
      const [at, now, place, seq, last, from] = await redis.passGate(
        keys.target(request.targetUrl),
        keys.budget(request.accountId, request.targetUrl),
        us(limits.targetIntervalMs),
        us(limits.hostIntervalMs),
        us(limits.hostBurstMs),
        us(Math.max(0, request.maxWaitMs)),
        String(request.place ?? 0),
        us(request.soonMs ?? SOON_MS),
        us(IDLE_CONNECTION_MS),
        us(NEW_CONNECTION_ALLOWANCE_MS),
        request.newConnection ? '1' : '0',
        us(request.leadMs ?? 0),
      );
      const granted = seq > 0 ? { seq, lastSent: Number(last), forHandshake: Number(last) > Number(at) } : undefined;
      return gateAnswer(Number(at) < 0 ? undefined : { at: Number(at), from: Number(from), place: Number(place), granted }, Number(now), US_PER_MS);
    },
    async hold(targetUrl, ms) {
      await redis.holdTarget(keys.target(targetUrl), us(ms));
    },
    async startedLate(targetUrl, perSecond, granted, byMs) {
      const limits = paceLimits(perSecond, hostBudget);
      await redis.startedLate(keys.target(targetUrl), String(granted.seq), String(granted.lastSent), us(byMs), us(limits.targetIntervalMs), String(limits.perSecond));
    },
    async close() {
      await redis.quit();
    },
  };
}
