/**
 * Figure 4: one event to an account with 1,000 subscriptions (distinct URLs on one host), from
 * ingestion to the last delivery, against 1,000 raw POSTs with as many in flight as a worker
 * sends at once (DELIVERY_CONCURRENCY).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { median } from '../../kit/statistics.js';
import type { BenchContext } from '../context.js';
import { rawPostBatch } from '../measure/rawPosts.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { FANOUT_HOOKS, FANOUT_REPS, SERVICE_DEFAULTS } from '../settings.js';
import { fireCall } from '../support/clients.js';
import { monotonicMs } from '../support/load.js';
import { insertHooks, insertKeyRow } from '../support/seeding.js';
import type { PostgresStack } from '../support/stacks.js';

const ACCOUNT = 'fanout';
const CHANNEL = '/f';

async function fanOutOnce(ctx: BenchContext, webUrl: string) {
  await ctx.receiver.reset();
  const pool = new Pool(webUrl, { connections: 1 });
  try {
    const t0 = monotonicMs();
    await fireCall(pool, ctx.token, ACCOUNT, randomUUID());
    const stats = await ctx.receiver.waitForCount(FANOUT_HOOKS, 60_000, CHANNEL);
    if (stats.count < FANOUT_HOOKS) throw new Error(`fan-out: ${stats.count} of ${FANOUT_HOOKS} delivered`);
    return { firstMs: stats.firstAt - t0, lastMs: stats.lastAt - t0, duplicates: stats.duplicates };
  } finally {
    await pool.close();
  }
}

export async function fanOut(ctx: BenchContext, stack: PostgresStack): Promise<FigureResult> {
  const concurrency = SERVICE_DEFAULTS.DELIVERY_CONCURRENCY;
  const keyId = await insertKeyRow(ctx.sql, ACCOUNT);
  await insertHooks(ctx.sql, keyId, ACCOUNT, 'new_conversation', `${ctx.receiver.url}${CHANNEL}`, FANOUT_HOOKS);
  await ctx.sql('ANALYZE hooks');
  const service = [];
  const raw = [];
  for (let rep = 0; rep < FANOUT_REPS; rep++) {
    service.push(await fanOutOnce(ctx, stack.web.url));
    raw.push(await rawPostBatch(ctx, FANOUT_HOOKS, concurrency));
  }
  const last = median(service.map((f) => f.lastMs));
  const rawMs = median(raw);
  ctx.progress(`figure 4: fan-out last delivery ${fmt(last)} ms (raw ${fmt(rawMs)} ms)`);
  return {
    data: { fanOut: { service, raw } },
    rows: [
      ratioRow({
        figure: '4',
        what: `Fan-out: 1 event → ${fmt(FANOUT_HOOKS)} subscriptions, ingestion → last delivery (median of ${FANOUT_REPS}: ${service.map((f) => fmt(f.lastMs)).join(', ')} ms; first after ${fmt(median(service.map((f) => f.firstMs)), 1)} ms)`,
        measured: `${fmt(last)} ms (${fmt((FANOUT_HOOKS / last) * 1000)} deliveries/s)`,
        reference: `${fmt(rawMs)} ms for ${fmt(FANOUT_HOOKS)} raw POSTs, ${concurrency} in flight`,
        ratio: last / rawMs,
        digits: 1,
        goalText: { text: '< 500 ms', met: last < 500 },
      }),
    ],
    notes: [
      `Figure 4 reference: a worker sends at most DELIVERY_CONCURRENCY (${concurrency}) deliveries at once, each its own job; the raw batch keeps as many POSTs in flight through one undici Agent.`,
    ],
  };
}
