import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { paceLimits, TURN_WINDOW_MS } from '../domain/pacing.js';
import { redisOptions } from '../queue/bullmq.js';
import { budgetKey, type Pacer, type ScheduleAnswer, type SlotAnswer } from './pacer.js';

/**
 * reserveSlot() and gateSend() of src/domain/pacing.ts, in Lua, so that each is atomic across
 * every worker. Times are integer microseconds of Redis's own clock (TIME), so workers' clocks
 * never disagree; string.format('%d') keeps them exact (Lua's tostring keeps only 14 digits).
 * A target's hash holds tat (the schedule), sent and last (the gate's line and its last
 * departure) and hold; a budget key its TAT.
 * Both return {time, now}, or {-1, now} when no time comes within the max wait; the schedule
 * also the delivery's turn, counted in one key per (account, second of its time).
 */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function us(x) return string.format('%d', x) end
-- Keys outlive their last time by a minute, then say nothing a fresh key would not.
local function expireTarget(tat, sent, hold)
  redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tat, sent, hold) - now) / 1000) + 60000)
end
`;

/**
 * KEYS: target, budget, the account's turns (a key per second is named from it: which second is
 * known only here). ARGV: target interval, host interval, host burst, max wait, turn window.
 */
const SCHEDULE = `${NOW}
local target = redis.call('HMGET', KEYS[1], 'tat', 'sent', 'hold')
local tat, sent, hold = tonumber(target[1]) or 0, tonumber(target[2]) or 0, tonumber(target[3]) or 0
local hostTat = tonumber(redis.call('GET', KEYS[2])) or 0
local slot = math.max(now, tat, hold, hostTat - tonumber(ARGV[3]))
if slot - now > tonumber(ARGV[4]) then return {'-1', us(now), 0} end
tat = slot + tonumber(ARGV[1])
hostTat = math.max(hostTat, slot) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'tat', us(tat))
expireTarget(tat, sent, hold)
redis.call('SET', KEYS[2], us(hostTat), 'PX', math.ceil((hostTat - now) / 1000) + 1000)
local turns = KEYS[3] .. ':' .. us(math.floor(slot / tonumber(ARGV[5])))
local turn = redis.call('INCR', turns)
redis.call('PEXPIRE', turns, math.ceil((slot - now) / 1000) + 60000)
return {us(slot), us(now), turn}
`;

/** KEYS: target. ARGV: target interval, max wait, the place in line held from before (0: none). */
const GATE = `${NOW}
local target = redis.call('HMGET', KEYS[1], 'tat', 'sent', 'hold', 'last')
local tat, sent, hold, last = tonumber(target[1]) or 0, tonumber(target[2]) or 0, tonumber(target[3]) or 0, tonumber(target[4]) or 0
local interval, taken = tonumber(ARGV[1]), tonumber(ARGV[3])
local earliest = math.max(now, last + interval, hold)
local place = taken
if taken <= 0 then place = math.max(earliest, sent) end
local at = math.max(earliest, place)
if at - now > tonumber(ARGV[2]) then return {'-1', us(now)} end
if taken <= 0 then
  sent = place + interval
  redis.call('HSET', KEYS[1], 'sent', us(sent))
end
if at <= now then redis.call('HSET', KEYS[1], 'last', us(now)) end
expireTarget(tat, sent, hold)
return {us(at), us(now)}
`;

/** KEYS: target. ARGV: how long to hold it. Holds only ever lengthen. */
const HOLD = `${NOW}
local target = redis.call('HMGET', KEYS[1], 'tat', 'sent', 'hold')
local hold = math.max(tonumber(target[3]) or 0, now + tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'hold', us(hold))
expireTarget(tonumber(target[1]) or 0, tonumber(target[2]) or 0, hold)
return 1
`;

type PacingRedis = Redis & {
  scheduleSlot(target: string, budget: string, turns: string, ...args: string[]): Promise<[string, string, number]>;
  gateSend(target: string, ...args: string[]): Promise<[string, string]>;
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
  redis.defineCommand('scheduleSlot', { numberOfKeys: 3, lua: SCHEDULE });
  redis.defineCommand('gateSend', { numberOfKeys: 1, lua: GATE });
  redis.defineCommand('holdTarget', { numberOfKeys: 1, lua: HOLD });
  const targetKey = (url: string) => `${settings.prefix}:pace:target:${digest(url)}`;
  const budget = (accountId: string, url: string) => `${settings.prefix}:pace:budget:${digest(budgetKey(accountId, url))}`;
  const turns = (accountId: string) => `${settings.prefix}:pace:turns:${digest(accountId)}`;
  const answer = ([at, now]: [string, string]): SlotAnswer =>
    Number(at) < 0 ? { kind: 'too_late' } : { kind: 'slot', at: Number(at), waitMs: Math.max(0, (Number(at) - Number(now)) / US_PER_MS) };

  return {
    async schedule(request): Promise<ScheduleAnswer> {
      const limits = paceLimits(request.perSecond, hostBudget);
      const [at, now, turn] = await redis.scheduleSlot(
        targetKey(request.targetUrl),
        budget(request.accountId, request.targetUrl),
        turns(request.accountId),
        us(limits.targetIntervalMs),
        us(limits.hostIntervalMs),
        us(limits.hostBurstMs),
        us(Math.max(0, request.maxWaitMs)),
        us(TURN_WINDOW_MS),
      );
      const slot = answer([at, now]);
      return slot.kind === 'slot' ? { ...slot, turn } : slot;
    },
    async gate(request) {
      const limits = paceLimits(request.perSecond, hostBudget);
      return answer(
        await redis.gateSend(targetKey(request.targetUrl), us(limits.targetIntervalMs), us(Math.max(0, request.maxWaitMs)), String(request.taken ?? 0)),
      );
    },
    async hold(targetUrl, ms) {
      await redis.holdTarget(targetKey(targetUrl), us(ms));
    },
    async close() {
      await redis.quit();
    },
  };
}
