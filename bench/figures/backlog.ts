/**
 * Figure 6: delivery throughput while a large backlog is due, against the same with a small
 * one. Events are written straight into the outbox with no job (as a Redis that lost its jobs
 * leaves them), then one worker's relay adds their jobs and it drains them; the rate is receipts
 * from the first to the last. The engine's
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
  // Recorded, with their outbox rows overdue, and their jobs lost (Redis lost them, say): the
  // relay adds them as the worker drains the queue.
  await ctx.sql(
    `WITH recorded AS (
       INSERT INTO events (id, account_id, event_type, data)
       SELECT gen_random_uuid(), $1, 'new_conversation',
              json_build_object('conversation_id', gen_random_uuid(), 'channel', 'voice', 'caller_name', 'Backlog',
                                'caller_number', '+14155550100', 'summary', 'A call from the backlog ' || g)
       FROM generate_series(1, $2::int) AS g
       RETURNING id, account_id, event_type, created_at)
     INSERT INTO event_outbox (event_id, account_id, event_type, created_at, relay_at) SELECT id, account_id, event_type, created_at, created_at FROM recorded`,
    [ACCOUNT, count],
  );
  await ctx.sql('ANALYZE events');
  await ctx.sql('ANALYZE event_outbox');
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
        what: `Delivery throughput while ${fmt(large.count)} deliveries are due (events waiting in the outbox, their jobs added by the relay), one worker, first to last receipt (${fmt(large.seconds, 1)} s)`,
        measured: `${fmt(large.perSecond)} deliveries/s`,
        reference: `${fmt(small.perSecond)} deliveries/s with ${fmt(small.count)} due, the same way`,
        ratio: large.perSecond / small.perSecond,
        goal: { atLeast: 0.9 },
      }),
    ],
  };
}
