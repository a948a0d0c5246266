import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { paceLimits } from '../domain/pacing.js';
import { redisOptions } from '../queue/bullmq.js';
import { budgetKey, type Pacer } from './pacer.js';

/**
 * reserveSlot() of src/domain/pacing.ts, in Lua so that one reservation is atomic across every
 * worker. Times are integer microseconds of Redis's own clock (TIME), so workers' clocks never
 * disagree about a slot; string.format('%d') keeps them exact (Lua's tostring keeps 14 digits).
 * KEYS: the target's hash {tat, hold}; the (account, host) budget's TAT.
 * ARGV: target interval, host interval, host burst, max wait, a slot reserved before (0: none).
 * Returns {slot, now}, or {-1, now} when no slot comes within the max wait.
 */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local target = redis.call('HMGET', KEYS[1], 'tat', 'hold')
local targetTat = tonumber(target[1]) or 0
local hold = tonumber(target[2]) or 0
local reserved = tonumber(ARGV[5])
if reserved > 0 and hold <= reserved then
  return {string.format('%d', reserved), string.format('%d', now)}
end
local hostTat = tonumber(redis.call('GET', KEYS[2])) or 0
local slot = math.max(now, targetTat, hold, hostTat - tonumber(ARGV[3]))
if slot - now > tonumber(ARGV[4]) then
  return {'-1', string.format('%d', now)}
end
local nextTarget = slot + tonumber(ARGV[1])
local nextHost = math.max(hostTat, slot) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'tat', string.format('%d', nextTarget))
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(nextTarget, hold) - now) / 1000) + 60000)
redis.call('SET', KEYS[2], string.format('%d', nextHost), 'PX', math.ceil((nextHost - now) / 1000) + 1000)
return {string.format('%d', slot), string.format('%d', now)}
`;

/** KEYS: the target's hash. ARGV: how long to hold it, microseconds. Holds only ever lengthen. */
const HOLD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local target = redis.call('HMGET', KEYS[1], 'tat', 'hold')
local hold = math.max(tonumber(target[2]) or 0, now + tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'hold', string.format('%d', hold))
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tonumber(target[1]) or 0, hold) - now) / 1000) + 60000)
return 1
`;

type PacingRedis = Redis & {
  reserveSlot(target: string, budget: string, ...args: string[]): Promise<[string, string]>;
  holdTarget(target: string, holdUs: string): Promise<number>;
};

const US_PER_MS = 1000;
const us = (ms: number) => String(Math.round(ms * US_PER_MS));
// Keys carry a hash, not the URL: hook URLs hold the receiver's secrets (Zapier's do).
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/**
 * The pacer of the web + workers mode: its state lives in Redis under the queue prefix, so the
 * pace holds whether one worker sends or ten. Like a worker, it waits for Redis when Redis is away.
 */
export function createRedisPacer(settings: { redisUrl: string; prefix: string }, hostBudget: number, log: Logger): Pacer {
  const redis = new Redis({ ...redisOptions(settings.redisUrl), maxRetriesPerRequest: null }) as PacingRedis;
  redis.on('error', (error) => log.warn({ err: error }, 'pacer connection problem; waiting for Redis'));
  redis.defineCommand('reserveSlot', { numberOfKeys: 2, lua: RESERVE });
  redis.defineCommand('holdTarget', { numberOfKeys: 1, lua: HOLD });
  const targetKey = (url: string) => `${settings.prefix}:pace:target:${digest(url)}`;
  const budget = (accountId: string, url: string) => `${settings.prefix}:pace:budget:${digest(budgetKey(accountId, url))}`;

  return {
    async reserve(request) {
      const limits = paceLimits(request.perSecond, hostBudget);
      const [slot, now] = (await redis.reserveSlot(
        targetKey(request.targetUrl),
        budget(request.accountId, request.targetUrl),
        us(limits.targetIntervalMs),
        us(limits.hostIntervalMs),
        us(limits.hostBurstMs),
        us(Math.max(0, request.maxWaitMs)),
        String(request.reserved ?? 0),
      )).map(Number) as [number, number];
      if (slot < 0) return { kind: 'too_late' };
      return { kind: 'slot', slot, waitMs: Math.max(0, (slot - now) / US_PER_MS) };
    },
    async hold(targetUrl, ms) {
      await redis.holdTarget(targetKey(targetUrl), us(ms));
    },
    async close() {
      await redis.quit();
    },
  };
}
