/**
 * Figure 2: delivery throughput end to end (calls -> web -> Redis -> one worker -> receiver),
 * against raw undici POSTs to the same receiver; and, as a diagnostic, the delivery stage alone
 * (one worker drains a backlog with the web process idle).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { endToEndThroughput } from '../measure/deliveries.js';
import { rawPostThroughput } from '../measure/rawPosts.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { SERVICE_DEFAULTS, UPSERT_CONNECTIONS } from '../settings.js';
import { fireCall, runCount } from '../support/clients.js';
import type { CpuWindow } from '../support/cpu.js';
import type { PostgresStack } from '../support/stacks.js';

/** `accountId` has one new_conversation hook, on the receiver's `channel`; the stack runs one worker. */
export async function deliveryThroughput(
  ctx: BenchContext,
  stack: PostgresStack,
  accountId: string,
  channel: string,
): Promise<FigureResult & { perSecond: number }> {
  const { durations } = ctx.settings;
  const concurrency = SERVICE_DEFAULTS.DELIVERY_CONCURRENCY;
  ctx.progress(`figure 2: raw POSTs, ${concurrency} in flight, ${durations.raw} ms`);
  const raw = await rawPostThroughput(ctx, concurrency, durations.raw);
  ctx.progress(`  raw ${fmt(raw.perSecond)} POST/s`);
  const probe = await endToEndThroughput(ctx, stack.web.url, { accountId, channel }, 300);
  const events = Math.min(20_000, Math.max(1_000, Math.round(probe.perSecond * durations.e2eTargetSeconds)));
  ctx.progress(`figure 2: end to end, ${events} calls (probe: ${fmt(probe.perSecond)}/s)`);
  const e2e = await endToEndThroughput(ctx, stack.web.url, { accountId, channel }, events, 'delivery end to end (calls)');
  ctx.progress(`  e2e ${fmt(e2e.perSecond)} deliveries/s, ingestion ${fmt(e2e.ingestPerSecond)}/s`);

  // The delivery stage alone: events are ingested while no worker runs; then one worker drains
  // the backlog with the web process idle.
  await stack.stopWorkers();
  await ctx.receiver.reset();
  const pool = new Pool(stack.web.url, { connections: UPSERT_CONNECTIONS });
  try {
    await runCount(UPSERT_CONNECTIONS, events, () => fireCall(pool, ctx.token, accountId, randomUUID()));
  } finally {
    await pool.close();
  }
  await stack.startWorkers(1);
  const drainCpu: CpuWindow[] = [];
  const drained = await ctx.cpu.metered(drainCpu, () => ctx.receiver.waitForCount(events, 180_000, channel));
  if (drained.count < events) throw new Error(`drain: ${drained.count} of ${events} delivered`);
  const drainPerSecond = (drained.count - 1) / ((drained.lastAt - drained.firstAt) / 1000);
  ctx.cpu.record('delivery stage only (worker drains a backlog)', drainCpu, drained.count);
  ctx.progress(`  delivery stage alone: ${fmt(drainPerSecond)} deliveries/s`);

  const rawReference = `${fmt(raw.perSecond)} raw undici POST/s (${concurrency} in flight, ${durations.raw / 1000} s)`;
  return {
    perSecond: e2e.perSecond,
    data: { deliveryThroughput: { raw, e2e }, deliveryStageOnly: { events, perSecond: drainPerSecond, duplicates: drained.duplicates } },
    rows: [
      ratioRow({
        figure: '2',
        what: `Delivery throughput, end to end (calls → web → Redis → 1 worker → HTTPS receiver; ${fmt(e2e.events)} events)`,
        measured: `${fmt(e2e.perSecond)} deliveries/s`,
        reference: rawReference,
        ratio: e2e.perSecond / raw.perSecond,
        goal: { atLeast: 0.5 },
      }),
      ratioRow({
        figure: '2 (diagnostic)',
        what: `Delivery stage alone: one worker drains a backlog of ${fmt(events)} events, web idle (first to last receipt)`,
        measured: `${fmt(drainPerSecond)} deliveries/s`,
        reference: rawReference,
        ratio: drainPerSecond / raw.perSecond,
      }),
    ],
  };
}
