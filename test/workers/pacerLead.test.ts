import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { JITTER_ALLOWANCE_MS, NEW_CONNECTION_ALLOWANCE_MS, UNREPORTED_LATENESS_MS, type GrantedDeparture } from '../../src/domain/pacing.js';
import { createLocalPacer, type Pacer } from '../../src/workers/pacer.js';
import { createRedisPacer } from '../../src/workers/redisPacer.js';
import { redisForTest, withPostgresAndRedis } from '../support/processes.js';

const RATE = 5;
const INTERVAL_MS = (1000 + JITTER_ALLOWANCE_MS) / RATE;
const LEAD_MS = 300;
const HOST_BUDGET = 1_000;

const redis = withPostgresAndRedis ? redisForTest() : undefined;
afterAll(() => redis?.cleanup());

// The claim lead (src/workers/deliver.ts): a delivery asks for no departure sooner than its claim
// can commit, and the departure it is granted is the one the next is spaced from. And a late
// start moves the departures after it, and so does a handshake quicker than its allowance
// (startedOffTime in src/domain/pacing.ts).
const pacers: Array<[string, () => Pacer]> = [['in process', () => createLocalPacer(HOST_BUDGET)]];
if (redis) pacers.push(['in Redis', () => createRedisPacer({ target: redis.target, prefix: redis.prefix }, HOST_BUDGET, pino({ level: 'silent' }))]);

describe.each(pacers)('the gate %s', (_name, makePacer) => {
  it('grants no departure sooner than the lead asked, and spaces the next from that departure', async () => {
    const pacer = makePacer();
    try {
      const gate = (leadMs: number) =>
        pacer.gate({ targetUrl: 'https://lead.example.com/hook', accountId: 'account-1', perSecond: RATE, maxWaitMs: 60_000, leadMs, newConnection: false });
      const asked = Date.now();
      const first = await gate(LEAD_MS);
      expect(first.kind).toBe('go');
      expect(first.kind === 'go' && first.inMs).toBeGreaterThanOrEqual(LEAD_MS - 5);
      const second = await gate(0);
      // Counted from the second pass: sooner by the time the two passes took.
      expect(second.kind).toBe('wait');
      expect(second.kind === 'wait' && second.waitMs).toBeGreaterThanOrEqual(LEAD_MS + INTERVAL_MS - (Date.now() - asked) - 5);
    } finally {
      await pacer.close();
    }
  });

  it('lets a granted departure leave once claimed, up to its lead early, but never within an interval of the last', async () => {
    const pacer = makePacer();
    try {
      const gate = () =>
        pacer.gate({
          targetUrl: 'https://early.example.com/hook',
          accountId: 'account-1',
          perSecond: RATE,
          maxWaitMs: 60_000,
          leadMs: LEAD_MS,
          soonMs: 1_000,
          newConnection: false,
        });
      // An idle target: the departure is a lead away, and it may leave as soon as its claim is in.
      const asked = Date.now();
      const first = await gate();
      expect(first.kind === 'go' && [first.inMs >= LEAD_MS - 5, first.fromMs <= 5]).toStrictEqual([true, true]);
      // The next is bound by the interval after the first's departure as granted, not after when
      // the first really left (nor its handshake's allowance: that binds the departure `rate` after).
      const second = await gate();
      expect(second.kind).toBe('go');
      if (first.kind !== 'go' || second.kind !== 'go') return;
      // Counted from the second pass: sooner by the time the two passes took.
      expect(second.fromMs).toBeGreaterThanOrEqual(first.inMs + INTERVAL_MS - (Date.now() - asked) - 5);
      expect(second.fromMs).toBeLessThan(first.inMs + INTERVAL_MS + NEW_CONNECTION_ALLOWANCE_MS / 2);
      expect(Math.abs(second.fromMs - second.inMs)).toBeLessThanOrEqual(1);
    } finally {
      await pacer.close();
    }
  });

  it('grants no departure further off than soonMs: a later one is a wait, and spends no time', async () => {
    const pacer = makePacer();
    try {
      const gate = (soonMs?: number, place?: number) =>
        pacer.gate({
          targetUrl: 'https://soon.example.com/hook',
          accountId: 'account-1',
          perSecond: RATE,
          maxWaitMs: 60_000,
          leadMs: 0,
          soonMs,
          place,
          newConnection: false,
        });
      expect((await gate()).kind).toBe('go');
      // The next departure is an interval (216 ms) away: within SOON_MS (250), beyond 40 ms.
      const refused = await gate(40);
      expect(refused.kind).toBe('wait');
      // Asked again keeping its place, with the usual SOON_MS: granted the same departure.
      const granted = await gate(undefined, refused.kind === 'wait' ? refused.place : undefined);
      expect(granted.kind).toBe('go');
      expect(granted.kind === 'go' && granted.inMs).toBeLessThanOrEqual(INTERVAL_MS);
    } finally {
      await pacer.close();
    }
  });

  it('leaves the departure `rate` after a POST that started late a window after it really left, and counts two late together once', async () => {
    const pacer = makePacer();
    const LATE_BY_MS = 300;
    try {
      // `rate` departures granted at once to each target (soonMs wide enough), then the next asked for.
      const gate = (targetUrl: string) =>
        pacer.gate({ targetUrl, accountId: 'account-1', perSecond: RATE, maxWaitMs: 60_000, leadMs: 0, soonMs: 5_000, newConnection: false });
      const [late, onTime] = ['https://late.example.com/hook', 'https://on-time.example.com/hook'];
      const granted = [];
      // The two targets' departures granted side by side (each pair asked together), so that their
      // lines start together however slowly the machine answers.
      for (let i = 0; i < RATE; i++) {
        const [answer, other] = await Promise.all([gate(late), gate(onTime)]);
        expect([answer.kind, other.kind]).toStrictEqual(['go', 'go']);
        if (answer.kind === 'go' && i < 2) granted.push(answer.granted);
      }
      // The first two POSTs to `late` start LATE_BY_MS late (one stall): the line moves LATE_BY_MS, not twice that.
      for (const departure of granted) await pacer.startedOffTime(late, RATE, departure, LATE_BY_MS);
      const [afterLate, afterOnTime] = await Promise.all([gate(late), gate(onTime)]);
      expect(afterLate.kind === 'go' && afterOnTime.kind === 'go').toBe(true);
      const lateBy = afterLate.kind === 'go' && afterOnTime.kind === 'go' ? afterLate.inMs - afterOnTime.inMs : Number.NaN;
      expect(lateBy).toBeGreaterThanOrEqual(LATE_BY_MS - 10);
      expect(lateBy).toBeLessThanOrEqual(LATE_BY_MS + 10);
    } finally {
      await pacer.close();
    }
  });

  it("leaves the departure `rate` after a handshake's departure a window after its POST really left, not after the whole allowance", async () => {
    const pacer = makePacer();
    const HANDSHAKE_MS = 30;
    try {
      const gate = (targetUrl: string, newConnection: boolean) =>
        pacer.gate({ targetUrl, accountId: 'account-1', perSecond: RATE, maxWaitMs: 60_000, leadMs: 0, soonMs: 5_000, newConnection });
      // Each target's first departure opens a connection; the next `rate` - 1 are granted at once.
      const [quick, slow] = ['https://quick-handshake.example.com/hook', 'https://slow-handshake.example.com/hook'];
      let opened: GrantedDeparture | undefined;
      for (const url of [quick, slow]) {
        for (let i = 0; i < RATE; i++) {
          const answer = await gate(url, i === 0);
          expect(answer.kind).toBe('go');
          if (url === quick && i === 0 && answer.kind === 'go') opened = answer.granted;
        }
      }
      expect(opened?.forHandshake).toBe(true);
      // `quick`'s handshake took HANDSHAKE_MS; `slow`'s is not reported (it took its allowance).
      await pacer.startedOffTime(quick, RATE, opened!, HANDSHAKE_MS - NEW_CONNECTION_ALLOWANCE_MS - UNREPORTED_LATENESS_MS);
      const [afterQuick, afterSlow] = [await gate(quick, false), await gate(slow, false)];
      expect(afterQuick.kind === 'go' && afterSlow.kind === 'go').toBe(true);
      const soonerBy = afterQuick.kind === 'go' && afterSlow.kind === 'go' ? afterSlow.inMs - afterQuick.inMs : Number.NaN;
      const givenBack = NEW_CONNECTION_ALLOWANCE_MS + UNREPORTED_LATENESS_MS - HANDSHAKE_MS;
      expect(soonerBy).toBeGreaterThanOrEqual(givenBack - 10);
      expect(soonerBy).toBeLessThanOrEqual(givenBack + 10);
    } finally {
      await pacer.close();
    }
  });
});
