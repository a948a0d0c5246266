/**
 * Figure 8: delivery throughput to other targets while one target is saturated, against the
 * same without it, in the same run. Account B's calls each go to SPREAD_HOOKS hooks of B's that
 * may take up to 1,000 POSTs a second, so B is bound by the engine, not by pacing. B is measured
 * alone, then while account A has thousands of deliveries queued at one hook at the default pace
 * (its target saturated, draining at its limit); each in SPREAD_ROUNDS rounds. Goal: at least 0.9.
 * The other way round, A's target should keep its pace while B's bursts take the engine: its
 * rate during B's rounds against its rate just before with B idle, goal at least 0.9 too.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { sleep, waitUntil } from '../../kit/waiting.js';
import type { BenchContext } from '../context.js';
import { endToEndThroughput } from '../measure/deliveries.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import {
  BACKLOG_EVENTS,
  PACED_WORKERS,
  SATURATED_ALONE_MS,
  SERVICE_DEFAULTS,
  SPREAD_EVENTS,
  SPREAD_HOOKS,
  SPREAD_MAX_PER_SECOND,
  SPREAD_ROUNDS,
  UPSERT_CONNECTIONS,
} from '../settings.js';
import { fireCall, runCount } from '../support/clients.js';
import type { PostgresStack } from '../support/stacks.js';

const A = { accountId: 'backlog', channel: '/a' };

const count = async (ctx: BenchContext, text: string, params: unknown[]) => Number(((await ctx.sql(text, params)).rows[0] as { n: number }).n);
const queuedFor = (ctx: BenchContext, accountId: string) =>
  count(ctx, `SELECT count(*)::int AS n FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.account_id = $1 AND d.status = 'queued'`, [accountId]);

/**
 * Sends A's backlog and waits until the workers have fanned out every one of its events: its
 * deliveries are queued, each waiting its time at the gate.
 */
async function queueBacklog(ctx: BenchContext, stack: PostgresStack) {
  const pool = new Pool(stack.web.url, { connections: UPSERT_CONNECTIONS });
  try {
    await runCount(UPSERT_CONNECTIONS, BACKLOG_EVENTS, () => fireCall(pool, ctx.token, A.accountId, randomUUID()));
  } finally {
    await pool.close();
  }
  await waitUntil(
    async () => (await count(ctx, 'SELECT count(*)::int AS n FROM event_outbox', [])) === 0,
    120_000,
    "account A's events to be fanned out by the workers",
  );
}

/** Account B of one round: its own key and SPREAD_HOOKS hooks (own budget per host), on channel /b<round>. */
async function spreadAccount(ctx: BenchContext, stack: PostgresStack, round: number) {
  const b = { accountId: `spread-${round}`, channel: `/b${round}`, hooks: SPREAD_HOOKS };
  const key = await stack.client.newKey(b.accountId);
  for (let i = 1; i <= SPREAD_HOOKS; i++) await stack.client.subscribe(key, 'new_conversation', `${ctx.receiver.url}${b.channel}/${i}`, SPREAD_MAX_PER_SECOND);
  return b;
}

export async function saturatedTarget(ctx: BenchContext, stack: PostgresStack): Promise<FigureResult> {
  await stack.client.subscribe(await stack.client.newKey(A.accountId), 'new_conversation', `${ctx.receiver.url}${A.channel}`);
  const events = Math.max(50, Math.round(SPREAD_EVENTS * ctx.settings.scale));
  // Each round is a fresh account B, so no round spends another's (account, host) budget.
  const measureB = async (round: number, cpuLabel?: string) => endToEndThroughput(ctx, stack.web.url, await spreadAccount(ctx, stack, round), events, cpuLabel);

  // Unmeasured: the first calls through fresh processes (JIT, pools, plans) are slow.
  await measureB(0);
  ctx.progress(`figure 8: account B alone, ${SPREAD_ROUNDS} rounds of ${events} calls × ${SPREAD_HOOKS} hooks`);
  const alone = [];
  for (let round = 1; round <= SPREAD_ROUNDS; round++) alone.push(await measureB(round, 'other targets, alone'));
  ctx.progress(`  ${alone.map((r) => fmt(r.perSecond)).join(', ')} deliveries/s`);

  ctx.progress(`figure 8: account A queues ${fmt(BACKLOG_EVENTS)} deliveries at one target`);
  await queueBacklog(ctx, stack);
  const backlogBefore = await queuedFor(ctx, A.accountId);
  // A's target alone, draining its backlog: the reference for its rate while B's rounds run.
  const aloneWindowMs = Math.max(2_000, Math.round(SATURATED_ALONE_MS * ctx.settings.scale));
  await ctx.receiver.reset();
  await sleep(aloneWindowMs);
  const saturatedAlone = (await ctx.receiver.stats(A.channel)).count / (aloneWindowMs / 1000);
  ctx.progress(`figure 8: A's target alone took ${fmt(saturatedAlone, 1)}/s; account B beside A's backlog of ${fmt(backlogBefore)}`);
  const beside = [];
  const saturatedRates: number[] = [];
  for (let round = 1; round <= SPREAD_ROUNDS; round++) {
    beside.push(await measureB(SPREAD_ROUNDS + round, 'other targets, beside a saturated one'));
    // The receiver was reset when B's round began: A's receipts since are those during it.
    const saturated = await ctx.receiver.stats(A.channel);
    saturatedRates.push(saturated.count / beside.at(-1)!.seconds);
  }
  const backlogAfter = await queuedFor(ctx, A.accountId);
  ctx.progress(
    `  ${beside.map((r) => fmt(r.perSecond)).join(', ')} deliveries/s; A's target took ${saturatedRates.map((r) => fmt(r, 1)).join(', ')}/s meanwhile`,
  );

  const mean = (runs: { perSecond: number }[]) => runs.reduce((sum, run) => sum + run.perSecond, 0) / runs.length;
  const rounds = (runs: { perSecond: number }[]) => runs.map((run) => fmt(run.perSecond)).join(' / ');
  const limit = SERVICE_DEFAULTS.DELIVERY_RATE_PER_TARGET;
  const saturatedRate = saturatedRates.reduce((sum, rate) => sum + rate, 0) / saturatedRates.length;
  return {
    data: { saturatedTarget: { alone, beside, backlogBefore, backlogAfter, saturatedRates } },
    rows: [
      ratioRow({
        figure: '8',
        what:
          `Delivery throughput to other targets while one target is saturated (web + ${PACED_WORKERS} workers, default pacing): in each of ${SPREAD_ROUNDS} rounds a fresh account B's ${fmt(events)} calls × ${SPREAD_HOOKS} hooks ` +
          `(max_per_second ${SPREAD_MAX_PER_SECOND}), first call to last receipt (${rounds(beside)} per s), while account A had ${fmt(backlogBefore)} deliveries queued at one hook paced at ${limit}/s ` +
          `(${fmt(backlogAfter)} still queued after; A's target took ${saturatedRates.map((r) => fmt(r, 1)).join(' / ')} per s meanwhile)`,
        measured: `${fmt(mean(beside))} deliveries/s`,
        reference: `${fmt(mean(alone))} deliveries/s: the same with no backlog anywhere (${rounds(alone)} per s)`,
        ratio: mean(beside) / mean(alone),
        goal: { atLeast: 0.9 },
      }),
      ratioRow({
        figure: '8',
        what:
          `The other way round: the saturated target's own rate while account B's bursts take the engine, A's receipts during each of B's rounds over the round's length ` +
          `(${saturatedRates.map((r) => fmt(r, 1)).join(' / ')} per s; its limit ${limit}/s)`,
        measured: `${fmt(saturatedRate, 1)} POSTs/s`,
        reference: `${fmt(saturatedAlone, 1)} POSTs/s: A's target draining the same backlog with B idle, over ${fmt(aloneWindowMs / 1000, 1)} s just before`,
        ratio: saturatedRate / saturatedAlone,
        goal: { atLeast: 0.9 },
      }),
    ],
  };
}
