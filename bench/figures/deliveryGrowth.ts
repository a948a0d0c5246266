/**
 * Figure 5's delivery series: figure 2's end-to-end throughput again once the deliveries table
 * holds GROWTH_DELIVERY_ROWS old rows (the log of past deliveries, within the retention), against
 * figure 2's own with an almost empty table. The engine's statements touch rows by key and by
 * partial indexes, so the cost per delivery should not grow with the log.
 */
import type { BenchContext } from '../context.js';
import { endToEndThroughput } from '../measure/deliveries.js';
import { fmt, growthRows, type FigureResult } from '../results.js';
import { GROWTH_DELIVERY_ROWS } from '../settings.js';
import { insertHooks, insertKeyRow } from '../support/seeding.js';
import type { PostgresStack } from '../support/stacks.js';

const FILLER_ACCOUNT = 'log-filler';
const HOOKS = 1_000;
/** Rows per statement: events of the chunk × every filler hook. */
const EVENTS_PER_CHUNK = 1_000;

/** Writes `rows` delivered rows (and their events, a filler account's) as one day's log of a busy platform. */
async function seedDeliveryLog(ctx: BenchContext, rows: number) {
  const keyId = await insertKeyRow(ctx.sql, FILLER_ACCOUNT);
  await insertHooks(ctx.sql, keyId, FILLER_ACCOUNT, 'missed_call', 'https://filler.example/h', HOOKS);
  for (let written = 0; written < rows; written += EVENTS_PER_CHUNK * HOOKS) {
    const events = Math.min(EVENTS_PER_CHUNK, Math.ceil((rows - written) / HOOKS));
    await ctx.sql(
      `WITH fired AS (
         INSERT INTO events (id, account_id, event_type, data, created_at)
         SELECT gen_random_uuid(), $1, 'missed_call', '{}', now() - interval '1 hour'
         FROM generate_series(1, $2::int) RETURNING id, created_at)
       INSERT INTO deliveries (id, event_id, hook_id, account_id, status, response_status, duration_ms, queued_at, attempted_at)
       SELECT gen_random_uuid(), fired.id, h.id, $1, 'delivered', 200, 5, fired.created_at, fired.created_at
       FROM fired CROSS JOIN (SELECT id FROM hooks WHERE account_id = $1) h`,
      [FILLER_ACCOUNT, events],
    );
  }
  await ctx.sql('VACUUM ANALYZE deliveries');
  await ctx.sql('VACUUM ANALYZE events');
  await ctx.sql('CHECKPOINT');
  return Number(((await ctx.sql('SELECT count(*)::bigint AS n FROM deliveries')).rows[0] as { n: number }).n);
}

/** `deliver` has one new_conversation hook on the receiver; `basePerSecond` is figure 2's (web + 1 worker). */
export async function deliveryGrowth(
  ctx: BenchContext,
  stack: PostgresStack,
  deliver: { accountId: string; channel: string },
  basePerSecond: number,
): Promise<FigureResult> {
  const rows = Math.max(100_000, Math.round(GROWTH_DELIVERY_ROWS * ctx.settings.scale));
  const rowsBefore = Number(((await ctx.sql('SELECT count(*)::bigint AS n FROM deliveries')).rows[0] as { n: number }).n);
  ctx.progress(`figure 5: seeding ${fmt(rows)} delivery rows`);
  const started = performance.now();
  const actualRows = await seedDeliveryLog(ctx, rows);
  ctx.progress(`  seeded in ${fmt((performance.now() - started) / 1000)} s`);
  await endToEndThroughput(ctx, stack.web.url, deliver, 300);
  const events = Math.max(1_000, Math.round(basePerSecond * ctx.settings.durations.e2eTargetSeconds));
  const grown = await endToEndThroughput(ctx, stack.web.url, deliver, events, `delivery end to end, ${fmt(actualRows)} delivery rows`);
  ctx.progress(`  ${fmt(grown.perSecond)} deliveries/s with ${fmt(actualRows)} rows (figure 2: ${fmt(basePerSecond)})`);
  return {
    data: { deliveryGrowth: { actualRows, grown } },
    rows: [],
    growth: growthRows('delivery rows (PostgreSQL)', 'end-to-end deliveries/s, web + 1 worker', 'deliveries/s', true, [
      { size: rowsBefore, actualRows: rowsBefore, value: basePerSecond },
      { size: rows, actualRows, value: grown.perSecond },
    ]),
  };
}
