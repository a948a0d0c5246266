/**
 * Figure 2: delivery throughput end to end (calls -> web -> outbox -> workers -> receiver), with
 * one worker and with two, each against the durable minimum measured just before it in
 * alternating rounds (what any at-most-once sender with an outbox pays at least:
 * bench/measure/durableMinimum.ts); and, as a diagnostic, the delivery stage alone (one worker
 * drains a backlog with the web process idle).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { median } from '../../kit/statistics.js';
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
/**
 * Each engine figure is measured in rounds, each right after a durable minimum of its own: this
 * host's speed moves by half within minutes, and a reference measured a minute before its figure
 * moved the ratio from 0.44 to 0.65 across five runs of the same code.
 */
const ROUNDS = 3;

type EndToEnd = Awaited<ReturnType<typeof endToEndThroughput>>;
interface Round {
  minimum: number;
  engine: EndToEnd;
}
const ratioOf = (round: Round) => round.engine.perSecond / round.minimum;

/** `accountId` has one new_conversation hook, on the receiver's `channel`; the stack runs one worker. */
export async function deliveryThroughput(
  ctx: BenchContext,
  stack: PostgresStack,
  accountId: string,
  channel: string,
): Promise<FigureResult & { perSecond: number }> {
  const { durations } = ctx.settings;
  const target = { accountId, channel };
  // The window is sized from a probe: a first short one only warms the processes up (its rate is
  // mostly their start), and the second is long enough that the rate it shows is near the steady one.
  await endToEndThroughput(ctx, stack.web.url, target, 300);
  const probe = await endToEndThroughput(ctx, stack.web.url, target, PROBE_CALLS);
  const events = Math.min(MOST_CALLS, Math.max(PROBE_CALLS, Math.round(probe.perSecond * durations.e2eTargetSeconds)));

  /** ROUNDS of (the durable minimum, then `events` calls end to end); the round of the median ratio stands for them. */
  async function besideMinimum(label: string): Promise<{ rounds: Round[]; median: Round }> {
    const rounds: Round[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      ctx.progress(
        `figure 2, round ${round} of ${ROUNDS}: the durable minimum (${DURABLE_MINIMUM_CONCURRENCY} loops, ${durations.raw} ms), then ${label}, ${events} calls`,
      );
      const minimum = (await durableMinimum(ctx, DURABLE_MINIMUM_CONCURRENCY, durations.raw)).perSecond;
      const engine = await endToEndThroughput(ctx, stack.web.url, target, events, `${label} (round ${round})`);
      ctx.progress(
        `  durable minimum ${fmt(minimum)}/s, then ${fmt(engine.perSecond)} deliveries/s (${fmt(engine.perSecond / minimum, 2)}), ingestion ${fmt(engine.ingestPerSecond)}/s`,
      );
      rounds.push({ minimum, engine });
    }
    const byRatio = [...rounds].sort((a, b) => ratioOf(a) - ratioOf(b));
    return { rounds, median: byRatio[Math.floor(ROUNDS / 2)]! };
  }
  const one = await besideMinimum('delivery end to end, web + 1 worker');
  await stack.startWorkers(1);
  const two = await besideMinimum('delivery end to end, web + 2 workers');

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

  const referenceOf = (perSecond: number) =>
    `${fmt(perSecond)} deliveries/s: the durable minimum (event INSERT, claim INSERT … ON CONFLICT DO NOTHING, POST, outcome UPDATE, each committed; ${DURABLE_MINIMUM_CONCURRENCY} loops over pg and undici pools of ${DURABLE_MINIMUM_CONCURRENCY})`;
  const list = (values: number[]) => values.map((value) => fmt(value)).join(' / ');
  const e2eRow = (workers: number, { rounds, median: { minimum, engine } }: { rounds: Round[]; median: Round }) =>
    ratioRow({
      figure: '2',
      what: `Delivery throughput, end to end (calls → web → outbox → ${workers} worker${workers > 1 ? 's' : ''} → HTTPS receiver; ${fmt(engine.events)} calls, ingested at ${fmt(engine.ingestPerSecond)}/s, first call to last receipt; the round of the median ratio of ${ROUNDS}, each right after its durable minimum: ${list(rounds.map((round) => round.engine.perSecond))} against ${list(rounds.map((round) => round.minimum))} per s)`,
      measured: `${fmt(engine.perSecond)} deliveries/s`,
      reference: referenceOf(minimum),
      ratio: engine.perSecond / minimum,
      goal: { atLeast: 0.8 },
    });
  const minimumOfAll = median([...one.rounds, ...two.rounds].map((round) => round.minimum));
  return {
    perSecond: one.median.engine.perSecond,
    data: {
      durableMinimum: minimumOfAll,
      deliveryThroughput: { one, two },
      deliveryStageOnly: { events, perSecond: drainPerSecond, duplicates: drained.duplicates },
    },
    rows: [
      e2eRow(1, one),
      e2eRow(2, two),
      ratioRow({
        figure: '2 (diagnostic)',
        what: `Delivery stage alone: one worker drains a backlog of ${fmt(events)} events, web idle (first to last receipt; against the median of the ${2 * ROUNDS} durable minimums)`,
        measured: `${fmt(drainPerSecond)} deliveries/s`,
        reference: referenceOf(minimumOfAll),
        ratio: drainPerSecond / minimumOfAll,
      }),
    ],
  };
}
