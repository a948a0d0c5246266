/**
 * Figure 6: delivery throughput while a large backlog is due, against the same with a small
 * one. Events are written straight into the outbox (as an outage of the workers leaves them),
 * then one worker drains them; the rate is receipts from the first to the last. The engine's
 * work per delivery must not grow with what waits: 100k due at least 0.9 of 10k due.
 */
import type { BenchContext } from '../context.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { BACKLOG_DUE, BACKLOG_SMALL } from '../settings.js';
import type { CpuWindow } from '../support/cpu.js';
import type { PostgresStack } from '../support/stacks.js';

const ACCOUNT = 'backlog';
const CHANNEL = '/b';

/** Puts `count` new_conversation events in the outbox with no worker running, then drains them with one. */
async function drain(ctx: BenchContext, stack: PostgresStack, count: number) {
  await stack.stopWorkers();
  await ctx.receiver.reset();
  await ctx.sql(
    `INSERT INTO events (id, account_id, event_type, data)
     SELECT gen_random_uuid(), $1, 'new_conversation',
            json_build_object('conversation_id', gen_random_uuid(), 'channel', 'voice', 'caller_name', 'Backlog',
                              'caller_number', '+14155550100', 'summary', 'A call from the backlog ' || g)
     FROM generate_series(1, $2::int) AS g`,
    [ACCOUNT, count],
  );
  await ctx.sql('ANALYZE events');
  await stack.startWorkers(1);
  const windows: CpuWindow[] = [];
  const stats = await ctx.cpu.metered(windows, () => ctx.receiver.waitForCount(count, 600_000, CHANNEL));
  if (stats.count < count) throw new Error(`backlog: ${stats.count} of ${count} delivered`);
  if (stats.duplicates > 0) throw new Error(`backlog: ${stats.duplicates} delivered twice`);
  ctx.cpu.record(`delivery stage, draining ${fmt(count)} due`, windows, stats.count);
  return { count, seconds: (stats.lastAt - stats.firstAt) / 1000, perSecond: (stats.count - 1) / ((stats.lastAt - stats.firstAt) / 1000) };
}

export async function backlog(ctx: BenchContext, stack: PostgresStack): Promise<FigureResult> {
  await stack.client.subscribe(await stack.client.newKey(ACCOUNT), 'new_conversation', `${ctx.receiver.url}${CHANNEL}`);
  const scaled = (n: number) => Math.max(1_000, Math.round(n * ctx.settings.scale));
  ctx.progress(`figure 6: draining ${fmt(scaled(BACKLOG_SMALL))} due, then ${fmt(scaled(BACKLOG_DUE))} due`);
  const small = await drain(ctx, stack, scaled(BACKLOG_SMALL));
  const large = await drain(ctx, stack, scaled(BACKLOG_DUE));
  ctx.progress(`  ${fmt(small.perSecond)}/s with ${fmt(small.count)} due, ${fmt(large.perSecond)}/s with ${fmt(large.count)} due`);
  return {
    data: { backlog: { small, large } },
    rows: [
      ratioRow({
        figure: '6',
        what: `Delivery throughput while ${fmt(large.count)} deliveries are due (events waiting in the outbox), one worker, first to last receipt (${fmt(large.seconds, 1)} s)`,
        measured: `${fmt(large.perSecond)} deliveries/s`,
        reference: `${fmt(small.perSecond)} deliveries/s with ${fmt(small.count)} due, the same way`,
        ratio: large.perSecond / small.perSecond,
        goal: { atLeast: 0.9 },
      }),
    ],
  };
}
