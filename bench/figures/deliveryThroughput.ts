/**
 * Figure 2: delivery throughput end to end (calls -> web -> outbox -> workers -> receiver), with
 * one worker and with two, against the durable minimum measured in the same run (what any
 * at-most-once sender with an outbox pays at least: bench/measure/durableMinimum.ts); and, as a
 * diagnostic, the delivery stage alone (one worker drains a backlog with the web process idle).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { endToEndThroughput } from '../measure/deliveries.js';
import { durableMinimum } from '../measure/durableMinimum.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { DURABLE_MINIMUM_CONCURRENCY, UPSERT_CONNECTIONS } from '../settings.js';
import { fireCall, runCount } from '../support/clients.js';
import type { CpuWindow } from '../support/cpu.js';
import type { PostgresStack } from '../support/stacks.js';

const PROBE_CALLS = 2_000;
const MOST_CALLS = 40_000;

/** `accountId` has one new_conversation hook, on the receiver's `channel`; the stack runs one worker. */
export async function deliveryThroughput(
  ctx: BenchContext,
  stack: PostgresStack,
  accountId: string,
  channel: string,
): Promise<FigureResult & { perSecond: number }> {
  const { durations } = ctx.settings;
  ctx.progress(`figure 2: the durable minimum, ${DURABLE_MINIMUM_CONCURRENCY} loops, ${durations.raw} ms`);
  const minimum = await durableMinimum(ctx, DURABLE_MINIMUM_CONCURRENCY, durations.raw);
  ctx.progress(`  durable minimum ${fmt(minimum.perSecond)} deliveries/s`);
  const target = { accountId, channel };
  // The window is sized from a probe: a first short one only warms the processes up (its rate is
  // mostly their start), and the second is long enough that the rate it shows is near the steady one.
  await endToEndThroughput(ctx, stack.web.url, target, 300);
  const probe = await endToEndThroughput(ctx, stack.web.url, target, PROBE_CALLS);
  const events = Math.min(MOST_CALLS, Math.max(PROBE_CALLS, Math.round(probe.perSecond * durations.e2eTargetSeconds)));
  ctx.progress(`figure 2: end to end, web + 1 worker, ${events} calls (probe: ${fmt(probe.perSecond)}/s)`);
  const one = await endToEndThroughput(ctx, stack.web.url, target, events, 'delivery end to end, web + 1 worker');
  ctx.progress(`  ${fmt(one.perSecond)} deliveries/s, ingestion ${fmt(one.ingestPerSecond)}/s`);
  await stack.startWorkers(1);
  ctx.progress(`figure 2: end to end, web + 2 workers, ${events} calls`);
  const two = await endToEndThroughput(ctx, stack.web.url, target, events, 'delivery end to end, web + 2 workers');
  ctx.progress(`  ${fmt(two.perSecond)} deliveries/s, ingestion ${fmt(two.ingestPerSecond)}/s`);

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

  const reference = `${fmt(minimum.perSecond)} deliveries/s: the durable minimum (event INSERT, claim INSERT … ON CONFLICT DO NOTHING, POST, outcome UPDATE, each committed; ${DURABLE_MINIMUM_CONCURRENCY} loops over pg and undici pools of ${DURABLE_MINIMUM_CONCURRENCY})`;
  const e2eRow = (workers: number, measured: typeof one) =>
    ratioRow({
      figure: '2',
      what: `Delivery throughput, end to end (calls → web → outbox → ${workers} worker${workers > 1 ? 's' : ''} → HTTPS receiver; ${fmt(measured.events)} calls, ingested at ${fmt(measured.ingestPerSecond)}/s, first call to last receipt)`,
      measured: `${fmt(measured.perSecond)} deliveries/s`,
      reference,
      ratio: measured.perSecond / minimum.perSecond,
      goal: { atLeast: 0.6 },
    });
  return {
    perSecond: one.perSecond,
    data: { durableMinimum: minimum, deliveryThroughput: { one, two }, deliveryStageOnly: { events, perSecond: drainPerSecond, duplicates: drained.duplicates } },
    rows: [
      e2eRow(1, one),
      e2eRow(2, two),
      ratioRow({
        figure: '2 (diagnostic)',
        what: `Delivery stage alone: one worker drains a backlog of ${fmt(events)} events, web idle (first to last receipt)`,
        measured: `${fmt(drainPerSecond)} deliveries/s`,
        reference,
        ratio: drainPerSecond / minimum.perSecond,
      }),
    ],
  };
}
