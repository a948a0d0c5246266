/**
 * Figure 3: latency from a call's ingestion to its POST's receipt at a quarter and at half of the
 * peak rate, each beside the durable minimum's (event, claim, POST, outcome; each committed)
 * driven open-loop at the same rate; and figure 5's subscriptions series: the same latency at
 * half the peak with 10, 1k and 10k subscriptions in the store (only one of which matches).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { deliveryLatency } from '../measure/deliveries.js';
import { durableMinimumLatency } from '../measure/durableMinimum.js';
import type { LatencyInput } from '../charts/charts.js';
import { fmt, growthRows, ratioRow, type FigureResult } from '../results.js';
import { DURABLE_MINIMUM_CONCURRENCY, HOOK_SIZES } from '../settings.js';
import { fireCall } from '../support/clients.js';
import { insertFillerHooks, insertKeyRow } from '../support/seeding.js';
import type { PostgresStack } from '../support/stacks.js';

/** Figure 3's rates: a quarter and half of figure 2's peak, or one fixed by BENCH_LATENCY_RATE (which meets no goal). */
export interface LatencyRate {
  /** The rates measured, slowest first; the last is figure 5's. */
  perSecond: number[];
  ofThePeak: boolean;
}

/** The share of the peak each of figure 3's rates is. */
export const PEAK_SHARES = [0.25, 0.5];
/** Figure 3's goal: the service's p99 at most this many times the durable minimum's at the same rate. */
const P99_GOAL = 2;

/** `accountId` has one new_conversation hook, on the receiver's `channel`. */
export async function latency(ctx: BenchContext, stack: PostgresStack, accountId: string, channel: string, at: LatencyRate): Promise<FigureResult> {
  const { durations } = ctx.settings;
  const { sql } = ctx;
  const liveHooks = async () => Number(((await sql('SELECT count(*)::int AS n FROM hooks WHERE deleted_at IS NULL')).rows[0] as { n: number }).n);
  const fillerKeyId = await insertKeyRow(sql, 'filler');
  let fillers = 0;
  const growHooksTo = async (size: number) => {
    const add = size - (await liveHooks());
    if (add > 0) await insertFillerHooks(sql, fillerKeyId, accountId, `${ctx.receiver.url}/x`, add, fillers);
    fillers += Math.max(0, add);
    await sql('ANALYZE hooks');
    return liveHooks();
  };
  const callLatency = async (rate: number, durationMs: number, label: string) => {
    const pool = new Pool(stack.web.url, { connections: 128 });
    try {
      return await deliveryLatency(ctx, `delivery latency, calls at ${rate}/s (${label})`, rate, durationMs, `${channel} `, () => {
        const id = randomUUID();
        return { key: `${channel} ${id}`, sent: fireCall(pool, ctx.token, accountId, id) };
      });
    } finally {
      await pool.close();
    }
  };

  // Each rate: the service, then the durable minimum right beside it, before the store grows.
  const byRate = [];
  for (const rate of at.perSecond) {
    ctx.progress(`figure 3: latency at ${rate}/s, then the durable minimum's at the same rate`);
    const service = await callLatency(rate, durations.latency, `${fmt(await liveHooks())} subscriptions`);
    const reference = await durableMinimumLatency(ctx, rate, durations.latency, DURABLE_MINIMUM_CONCURRENCY);
    ctx.progress(
      `  service p50 ${fmt(service.p50, 1)} / p99 ${fmt(service.p99, 1)} ms; durable minimum p50 ${fmt(reference.p50, 1)} / p99 ${fmt(reference.p99, 1)} ms`,
    );
    byRate.push({ rate, service, reference });
  }
  const growthRate = at.perSecond.at(-1)!;
  const hookPoints = [{ size: HOOK_SIZES[0]!, actualRows: await liveHooks(), measured: byRate.at(-1)!.service }];
  for (const size of HOOK_SIZES.slice(1)) {
    const actualRows = await growHooksTo(size);
    ctx.progress(`figure 5: latency at ${growthRate}/s with ${actualRows} subscriptions`);
    const measured = await callLatency(growthRate, durations.latencyGrowth, `${fmt(actualRows)} subscriptions`);
    ctx.progress(`  p50 ${fmt(measured.p50, 1)} ms, p99 ${fmt(measured.p99, 1)} ms`);
    hookPoints.push({ size, actualRows, measured });
  }
  const points = hookPoints.map(({ size, actualRows, measured }) => ({ size, actualRows, p50: measured.p50, p99: measured.p99, other: measured.other }));
  const rateName = (rate: number, i: number) => (at.ofThePeak ? `${PEAK_SHARES[i]! * 100}% of the peak, ${fmt(rate)}/s` : `BENCH_LATENCY_RATE, ${fmt(rate)}/s`);
  return {
    data: {
      latencyRates: {
        reference: 'the durable minimum, open loop at the same rate',
        rates: byRate.map(({ rate, service, reference }, i) => ({ label: rateName(rate, i), offeredPerSecond: rate, service, reference })),
      } satisfies LatencyInput,
      hookGrowth: points,
    },
    rows: byRate.flatMap(({ rate, service, reference }, i) => [
      ratioRow({
        figure: '3',
        what: `Latency call → POST received, p50, open loop at ${rateName(rate, i)} (${durations.latency / 1000} s, ${fmt(service.n)} events; call answered in p50 ${fmt(service.ingest.p50, 1)} ms)`,
        measured: `${fmt(service.p50, 1)} ms`,
        reference: `${fmt(reference.p50, 1)} ms: the durable minimum open loop at the same rate`,
        ratio: service.p50 / reference.p50,
        digits: 1,
      }),
      ratioRow({
        figure: '3',
        what: `Latency call → POST received, p99, open loop at ${rateName(rate, i)} (max ${fmt(service.max, 1)} ms)`,
        measured: `${fmt(service.p99, 1)} ms`,
        reference: `${fmt(reference.p99, 1)} ms: the durable minimum open loop at the same rate`,
        ratio: service.p99 / reference.p99,
        digits: 1,
        ...(at.ofThePeak ? { goal: { atMost: P99_GOAL } } : {}),
      }),
    ]),
    growth: [
      ...growthRows(
        'subscriptions (PostgreSQL)',
        `delivery latency p50 at ${growthRate}/s`,
        'ms',
        false,
        points.map((p) => ({ ...p, value: p.p50 })),
      ),
      ...growthRows(
        'subscriptions (PostgreSQL)',
        `delivery latency p99 at ${growthRate}/s`,
        'ms',
        false,
        points.map((p) => ({ ...p, value: p.p99 })),
      ),
    ],
  };
}
