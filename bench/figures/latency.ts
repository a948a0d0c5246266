/**
 * Figure 3: latency from ingestion to receipt at half the peak rate, against raw POST round
 * trips at the same rate; and figure 5's subscriptions series: the same latency with 10, 1k and
 * 10k subscriptions in the store (only one of which matches the event).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { deliveryLatency } from '../measure/deliveries.js';
import { rawPostLatency } from '../measure/rawPosts.js';
import { fmt, growthRows, ratioRow, type FigureResult } from '../results.js';
import { HOOK_SIZES } from '../settings.js';
import { fireCall } from '../support/clients.js';
import { insertFillerHooks, insertKeyRow } from '../support/seeding.js';
import type { PostgresStack } from '../support/stacks.js';

/** Figure 3's rate: half of figure 2's peak, or one fixed by BENCH_LATENCY_RATE (which meets no goal). */
export interface LatencyRate {
  perSecond: number;
  halfThePeak: boolean;
}

/** `accountId` has one new_conversation hook, on the receiver's `channel`. */
export async function latency(ctx: BenchContext, stack: PostgresStack, accountId: string, channel: string, at: LatencyRate): Promise<FigureResult> {
  const rate = at.perSecond;
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
  const callLatency = async (durationMs: number, label: string) => {
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

  const hookPoints = [];
  let raw: Awaited<ReturnType<typeof rawPostLatency>> | undefined;
  for (const size of HOOK_SIZES) {
    const actualRows = await growHooksTo(size);
    const first = size === HOOK_SIZES[0];
    ctx.progress(`figure ${first ? 3 : 5}: latency at ${rate}/s with ${actualRows} subscriptions`);
    const measured = await callLatency(first ? durations.latency : durations.latencyGrowth, `${fmt(actualRows)} subscriptions`);
    ctx.progress(`  p50 ${fmt(measured.p50, 1)} ms, p99 ${fmt(measured.p99, 1)} ms`);
    hookPoints.push({ size, actualRows, measured });
    // The reference right beside the figure it is compared with, before the store grows.
    if (first) raw = await rawPostLatency(ctx, rate, durations.rawLatency);
  }
  const service = hookPoints[0]!.measured;
  if (!raw) throw new Error('HOOK_SIZES is empty');
  ctx.progress(`  raw POST round trip at ${rate}/s: p50 ${fmt(raw.p50, 1)} ms, p99 ${fmt(raw.p99, 1)} ms`);
  const points = hookPoints.map(({ size, actualRows, measured }) => ({ size, actualRows, p50: measured.p50, p99: measured.p99, other: measured.other }));
  return {
    data: { latency: { service, raw }, hookGrowth: points },
    rows: [
      ratioRow({
        figure: '3',
        what: `Latency ingestion → receipt, p50 (open loop ${rate}/s = ${at.halfThePeak ? 'half the peak' : 'BENCH_LATENCY_RATE'}, ${durations.latency / 1000} s, ${fmt(service.n)} events)`,
        measured: `${fmt(service.p50, 1)} ms`,
        reference: `${fmt(raw.p50, 1)} ms raw POST round trip at ${rate}/s`,
        ratio: service.p50 / raw.p50,
        digits: 1,
      }),
      ratioRow({
        figure: '3',
        what: `Latency ingestion → receipt, p99 (max ${fmt(service.max, 1)} ms; call POST answered in p50 ${fmt(service.ingest.p50, 1)} / p99 ${fmt(service.ingest.p99, 1)} ms)`,
        measured: `${fmt(service.p99, 1)} ms`,
        reference: `${fmt(raw.p99, 1)} ms raw POST round trip at ${rate}/s`,
        ratio: service.p99 / raw.p99,
        digits: 1,
        ...(at.halfThePeak ? { goalText: { text: '< 50 ms', met: service.p99 < 50 } } : {}),
      }),
    ],
    growth: [
      ...growthRows('subscriptions (PostgreSQL)', `delivery latency p50 at ${rate}/s`, 'ms', false, points.map((p) => ({ ...p, value: p.p50 }))),
      ...growthRows('subscriptions (PostgreSQL)', `delivery latency p99 at ${rate}/s`, 'ms', false, points.map((p) => ({ ...p, value: p.p99 }))),
    ],
  };
}
