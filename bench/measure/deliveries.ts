/** How fast, and how soon, deliveries reach the receiver: the measurements figures 2, 3 and 5 share. */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { Pool } from 'undici';
import { summarize } from '../../kit/statistics.js';
import type { BenchContext } from '../context.js';
import { UPSERT_CONNECTIONS } from '../settings.js';
import { fireCall, runCount, upsertViaApi } from '../support/clients.js';
import type { CpuWindow } from '../support/cpu.js';
import { monotonicMs, openLoop } from '../support/load.js';

/**
 * Deliveries per second end to end: `total` calls to `accountId` ingested as fast as 50
 * connections allow, from the first call sent to the last delivery received on `channel`
 * (`hooks` deliveries per call: the account's new_conversation hooks there).
 */
export async function endToEndThroughput(
  ctx: BenchContext,
  webUrl: string,
  target: { accountId: string; channel: string; hooks?: number },
  total: number,
  cpuLabel?: string,
) {
  const { accountId, channel } = target;
  const expected = total * (target.hooks ?? 1);
  await ctx.receiver.reset();
  const pool = new Pool(webUrl, { connections: UPSERT_CONNECTIONS });
  const before = ctx.cpu.snapshot();
  try {
    const t0 = monotonicMs();
    await runCount(UPSERT_CONNECTIONS, total, () => fireCall(pool, ctx.token, accountId, randomUUID()));
    const ingestedAt = monotonicMs();
    const atIngestEnd = await ctx.receiver.stats(channel);
    const stats = await ctx.receiver.waitForCount(expected, 180_000, channel);
    if (stats.count < expected) throw new Error(`only ${stats.count} of ${expected} deliveries arrived`);
    const seconds = (stats.lastAt - t0) / 1000;
    if (cpuLabel) ctx.cpu.record(cpuLabel, [[before, ctx.cpu.snapshot()]], stats.count);
    return {
      events: total,
      deliveries: stats.count,
      duplicates: stats.duplicates,
      seconds,
      perSecond: stats.count / seconds,
      ingestPerSecond: total / ((ingestedAt - t0) / 1000),
      /** Deliveries still outstanding when the last call was acknowledged. */
      backlogAtIngestEnd: expected - atIngestEnd.count,
    };
  } finally {
    await pool.close();
  }
}

/**
 * Open-loop ingestion at `rate`; latency is receipt at the receiver minus the scheduled send,
 * on the monotonic clock the receiver process shares. `fire(i)` sends one event and returns the
 * receiver key (`path id`) its delivery will have; every key starts with `prefix`.
 */
export async function deliveryLatency(
  ctx: BenchContext,
  label: string,
  rate: number,
  durationMs: number,
  prefix: string,
  fire: (index: number) => { key: string; sent: Promise<void> },
) {
  const { receiver } = ctx;
  // Warm-up at the same rate, unmeasured: a process just started (JIT, pools) is slow at first.
  await receiver.reset();
  const warm = await openLoop(rate, ctx.settings.durations.latencyWarm, (index) => fire(-1 - index).sent);
  await receiver.waitForCount(warm.sent, 30_000);
  await receiver.reset();
  const windows: CpuWindow[] = [];
  const scheduled = new Map<string, number>();
  // Send times are kept only when traced: the load generator shares the service's cores, and so
  // does its GC.
  const trace = ctx.settings.latencyTrace ? { file: ctx.settings.latencyTrace, sentAt: new Map<string, number>() } : undefined;
  const ingest: number[] = [];
  const { loop, stats } = await ctx.cpu.metered(windows, async () => {
    const loop = await openLoop(rate, durationMs, async (index, scheduledAt) => {
      const { key, sent } = fire(index);
      scheduled.set(key, scheduledAt);
      trace?.sentAt.set(key, monotonicMs());
      await sent;
      ingest.push(monotonicMs() - scheduledAt);
    });
    return { loop, stats: await receiver.waitForCount(scheduled.size, 60_000) };
  });
  if (loop.errors > 0) throw new Error(`${loop.errors} ingestion errors, first: ${loop.firstError}`);
  const other = ctx.cpu.record(label, windows, scheduled.size).perOpMs.other ?? 0;
  const times = await receiver.times(prefix);
  const latencies: number[] = [];
  let missing = 0;
  for (const [key, at] of scheduled) {
    const receivedAt = times.get(key);
    if (receivedAt === undefined) missing++;
    else latencies.push(receivedAt - at);
  }
  if (missing > 0) throw new Error(`${label}: ${missing} of ${scheduled.size} deliveries never arrived`);
  if (trace) {
    const events = [...scheduled].map(([key, at]) => [at, trace.sentAt.get(key), times.get(key)]);
    appendFileSync(trace.file, `${JSON.stringify({ label, events })}\n`);
  }
  return { rate, events: scheduled.size, missing, duplicates: stats.duplicates, ...summarize(latencies), ingest: summarize(ingest), other };
}

/**
 * deliveryLatency of new contacts: public upserts of new phones with `key`, whose account has
 * one new_contact hook on the receiver's `channel`, at `rate` for the growth window.
 */
export async function newContactLatency(ctx: BenchContext, webUrl: string, key: string, channel: string, rate: number, label: string) {
  const pool = new Pool(webUrl, { connections: 128 });
  try {
    const measured = await deliveryLatency(
      ctx,
      `delivery latency, new contacts at ${rate}/s (${label})`,
      rate,
      ctx.settings.durations.latencyGrowth,
      `${channel} `,
      () => {
        const phone = ctx.phones.newPhone();
        return { key: `${channel} ${phone}`, sent: upsertViaApi(pool, key, phone) };
      },
    );
    ctx.progress(`  new_contact latency p50 ${measured.p50.toFixed(1)} ms, p99 ${measured.p99.toFixed(1)} ms`);
    return measured;
  } finally {
    await pool.close();
  }
}
