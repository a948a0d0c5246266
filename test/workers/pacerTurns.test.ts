import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalPacer, type Pacer } from '../../src/workers/pacer.js';
import { createRedisPacer } from '../../src/workers/redisPacer.js';
import { redisForTest, withPostgresAndRedis } from '../support/processes.js';

const HOST_BUDGET = 10_000;
const cleanups: (() => Promise<unknown>)[] = [];

/** Each pacer, with the length of a second in its own clock (the Redis pacer counts microseconds). */
const pacers: Record<string, () => { pacer: Pacer; second: number }> = {
  local: () => ({ pacer: createLocalPacer(HOST_BUDGET), second: 1_000 }),
  ...(withPostgresAndRedis && {
    redis: () => {
      const redis = redisForTest();
      const pacer = createRedisPacer({ redisUrl: redis.url, prefix: redis.prefix }, HOST_BUDGET, pino({ level: 'silent' }));
      cleanups.push(() => pacer.close(), () => redis.cleanup());
      return { pacer, second: 1_000_000 };
    },
  }),
};

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/**
 * A delivery's turn, which orders due deliveries between accounts: its place among its own
 * account's deliveries scheduled within the same second, whatever other accounts schedule.
 */
describe.each(Object.keys(pacers))('turns at the %s pacer', (kind) => {
  it("numbers an account's deliveries within each second of their times, apart from other accounts", async () => {
    const { pacer, second } = pacers[kind]!();
    const requests = Array.from({ length: 40 }, (_, i) => ({
      accountId: i % 4 === 3 ? 'quiet' : 'busy',
      targetUrl: `https://hooks.example/${i % 4}`,
      perSecond: 1_000,
      maxWaitMs: 60_000,
    }));
    const expected = new Map<string, number>();
    for (const request of requests) {
      const answer = await pacer.schedule(request);
      if (answer.kind !== 'slot') throw new Error('every request has a time within a minute');
      const key = `${request.accountId} ${Math.floor(answer.at / second)}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
      expect(answer.turn, key).toBe(expected.get(key));
    }
    // 30 of the busy account's and 10 of the quiet one's, almost all within one second.
    expect(Math.max(...[...expected].filter(([key]) => key.startsWith('busy')).map(([, turns]) => turns))).toBeGreaterThanOrEqual(15);
  });

  it('starts every account at turn 1 in a second of its own', async () => {
    const { pacer } = pacers[kind]!();
    const request = { targetUrl: 'https://hooks.example/slow', perSecond: 1, maxWaitMs: 60_000 };
    const turns = [];
    // One a second at this target: each delivery has a second to itself.
    for (let i = 0; i < 3; i++) turns.push(await pacer.schedule({ ...request, accountId: 'paced' }));
    expect(turns.map((answer) => answer.kind === 'slot' && answer.turn)).toStrictEqual([1, 1, 1]);
  });
});
