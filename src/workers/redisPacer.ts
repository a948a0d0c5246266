import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { IDLE_CONNECTION_MS, NEW_CONNECTION_ALLOWANCE_MS, PACE_WINDOW_MS, paceLimits, SOON_MS } from '../domain/pacing.js';
import { connectRedis, type RedisClient, type RedisSettings } from '../queue/redisConnection.js';
import { budgetKey, gateAnswer, type Pacer } from './pacer.js';
import { hostOf, remembered } from './targetHosts.js';

/**
 * passGate() and windowBound() of src/domain/pacing.ts in Lua, atomic across every worker. Times
 * are integer microseconds of Redis's own clock (TIME), so workers' clocks never disagree;
 * string.format('%d') keeps them exact (Lua's tostring keeps only 14 digits).
 * KEYS: the target's hash and its (account, host) budget, both under the target host's hash tag,
 * so one call's keys share a slot on a Redis Cluster. The hash holds tail, last, hold, sent, the
 * rate its window is kept at, and the window: w<slot> = when departure `slot` (windowSlot) counts.
 * ARGV: target interval, host interval, host burst, max wait, the place held from before (0: none),
 * how soon a departure is granted (SOON_MS or less), IDLE_CONNECTION_MS,
 * NEW_CONNECTION_ALLOWANCE_MS, a new connection (1) or not (0), the lead (the soonest it can
 * leave from now), the rate a window is kept at (0: none, PaceLimits.keepsWindow), PACE_WINDOW_MS.
 * Returns {at, now, place, seq, countsAt, from}: seq and countsAt of a granted departure (seq 0:
 * not granted, a wait); from is how soon it may leave once claimed; at = -1 when no time comes
 * within the max wait.
 */
const GATE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local lead, rate = tonumber(ARGV[10]), tonumber(ARGV[11])
local earliest = now + lead
local function us(x) return string.format('%d', x) end
local target = redis.call('HMGET', KEYS[1], 'tail', 'last', 'hold', 'sent', 'rate')
local tail, last, hold = tonumber(target[1]) or 0, tonumber(target[2]) or 0, tonumber(target[3]) or 0
local sent = tonumber(target[4]) or 0
if tonumber(target[5]) ~= rate then sent = 0 end
local interval, held = tonumber(ARGV[1]), tonumber(ARGV[5])
local bound = last + interval
if rate > 0 and sent >= rate then
  local rateAgo = tonumber(redis.call('HGET', KEYS[1], 'w' .. ((sent + 1) % rate))) or 0
  bound = math.max(last + math.floor(interval / 2), rateAgo + tonumber(ARGV[12]))
end
bound = math.max(bound, hold)
local place, hostTat = held, 0
if held <= 0 then
  hostTat = tonumber(redis.call('GET', KEYS[2])) or 0
  place = math.max(earliest, tail, hold, hostTat - tonumber(ARGV[3]))
end
local at = math.max(place, earliest, bound)
if at - now > tonumber(ARGV[4]) then return {'-1', us(now), '0', 0, '0', '0'} end
local from = math.max(at - lead, bound)
if held <= 0 then
  tail = place + interval
  redis.call('HSET', KEYS[1], 'tail', us(tail))
  hostTat = math.max(hostTat, place) + tonumber(ARGV[2])
  redis.call('SET', KEYS[2], us(hostTat), 'PX', math.ceil((hostTat - now) / 1000) + 1000)
end
local seq, counts = 0, at
if at <= earliest + tonumber(ARGV[6]) then
  if ARGV[9] == '1' or at - last > tonumber(ARGV[7]) then counts = at + tonumber(ARGV[8]) end
  seq = sent + 1
  last = at
  redis.call('HSET', KEYS[1], 'last', us(at), 'sent', seq, 'rate', rate)
  if rate > 0 then redis.call('HSET', KEYS[1], 'w' .. (seq % rate), us(counts)) end
end
-- The hash outlives its last time by a minute, then says nothing a fresh one would not.
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tail, hold, counts + 2000000) - now) / 1000) + 60000)
return {us(at), us(now), us(place), seq, us(counts), us(from)}
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
 * startedOffTime() of src/domain/pacing.ts. KEYS: the target's hash. ARGV: the departure's seq and
 * countsAt (as the gate returned them), how late its POST started (negative: how soon), and the
 * target's rate.
 */
const STARTED_OFF_TIME = `
local target = redis.call('HMGET', KEYS[1], 'sent', 'rate')
local sent, rate = tonumber(target[1]), tonumber(ARGV[4])
if not sent or tonumber(target[2]) ~= rate then return 0 end
local since = sent - tonumber(ARGV[1])
if since < 0 or since >= rate then return 0 end
local counts = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'w' .. (tonumber(ARGV[1]) % rate), string.format('%d', counts))
-- As the gate's: a minute past its last time, and never sooner than the gate left it.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ttl = math.ceil((counts + 2000000 - now) / 1000) + 60000
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

type PacingRedis = RedisClient & {
  passGate(target: string, budget: string, ...args: string[]): Promise<[string, string, string, number, string, string]>;
  holdTarget(target: string, holdUs: string): Promise<number>;
  startedOffTime(target: string, seq: string, countsAtUs: string, byUs: string, perSecond: string): Promise<number>;
};

const US_PER_MS = 1000;
const us = (ms: number) => String(Math.round(ms * US_PER_MS));
// Keys carry a hash, not the URL: hook URLs hold the receiver's secrets (Zapier's do).
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The key names: under the prefix, tagged with the target host, so a target's keys share a slot. */
export function pacerKeys(prefix: string) {
  const tag = remembered((host) => `${prefix}:pace:{${digest(host)}}`);
  const tagged = (url: string) => tag(hostOf(url));
  const budgetDigest = remembered(digest);
  return {
    target: remembered((url) => `${tagged(url)}:target:${digest(url)}`),
    budget: (accountId: string, url: string) => `${tagged(url)}:budget:${budgetDigest(budgetKey(accountId, url))}`,
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
  redis.defineCommand('startedOffTime', { numberOfKeys: 1, lua: STARTED_OFF_TIME });
  const keys = pacerKeys(settings.prefix);

  return {
    async gate(request) {
      const limits = paceLimits(request.perSecond, hostBudget);
      const [at, now, place, seq, countsAt, from] = await redis.passGate(
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
        String(limits.keepsWindow ? limits.perSecond : 0),
        us(PACE_WINDOW_MS),
      );
      const granted = seq > 0 ? { seq, countsAt: Number(countsAt), forHandshake: Number(countsAt) > Number(at) } : undefined;
      return gateAnswer(Number(at) < 0 ? undefined : { at: Number(at), from: Number(from), place: Number(place), granted }, Number(now), US_PER_MS);
    },
    async hold(targetUrl, ms) {
      await redis.holdTarget(keys.target(targetUrl), us(ms));
    },
    async startedOffTime(targetUrl, perSecond, granted, byMs) {
      await redis.startedOffTime(keys.target(targetUrl), String(granted.seq), String(granted.countsAt), us(byMs), String(perSecond));
    },
    async close() {
      await redis.quit();
    },
  };
}
