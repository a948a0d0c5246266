/**
 * Figure 7: what paced targets actually see, against their limits. Four targets at once, each
 * its own account with one new_contact hook, at max_per_second 1, 5, 20 and 100, each sent a CRM
 * sync of about twelve seconds' worth of new contacts at once; the 100/s one keeps the engine
 * busy for the others. Per target: the busiest sliding second at the receiver (what a receiver's
 * own rate limiter counts; the goal: never over the limit), and the achieved rate from first to
 * last receipt (the goal, at 20/s: at least 0.9 of the limit).
 */
import { Pool } from 'undici';
import { busiestWindow, percentile } from '../../kit/statistics.js';
import type { BenchContext } from '../context.js';
import { fmt, ratioRow, type FigureResult, type Row } from '../results.js';
import { PACED_RATES, UPSERT_CONNECTIONS } from '../settings.js';
import { crmSync, runCount, serviceClient } from '../support/clients.js';

/** Seconds of work each paced target is sent. */
const SECONDS_OF_WORK = 12;

interface PacedTarget {
  limit: number;
  sent: number;
  seconds: number;
  achieved: number;
  busiestSecond: number;
  shortestGapMs: number;
  gapsMs: { p1: number; p50: number };
  /** Each receipt, in ms since the target's first: the page's pacing chart. */
  arrivalsMs: number[];
}

/** One target at each rate, all synced at once through `webUrl`; what each receiver saw. */
async function pacedTargets(ctx: BenchContext, webUrl: string, label: string): Promise<PacedTarget[]> {
  const client = serviceClient(webUrl, ctx.token);
  const targets = [];
  for (const limit of PACED_RATES) {
    const accountId = `paced-${label}-${limit}`;
    const channel = `/p${label}${limit}`;
    await client.subscribe(await client.newKey(accountId), 'new_contact', `${ctx.receiver.url}${channel}`, limit);
    targets.push({ limit, accountId, channel, sent: Math.max(12, Math.round(limit * SECONDS_OF_WORK * Math.max(ctx.settings.scale, 0.25))) });
  }
  await ctx.receiver.reset();
  const pool = new Pool(webUrl, { connections: UPSERT_CONNECTIONS });
  try {
    const syncs = targets.flatMap((target) => Array.from({ length: target.sent }, () => target.accountId));
    await runCount(UPSERT_CONNECTIONS, syncs.length, (i) => crmSync(pool, ctx.token, syncs[i]!, ctx.phones.newPhone()));
  } finally {
    await pool.close();
  }
  const measured: PacedTarget[] = [];
  for (const target of targets) {
    const stats = await ctx.receiver.waitForCount(target.sent, (2 * target.sent * 1000) / target.limit + 60_000, target.channel);
    if (stats.count < target.sent) throw new Error(`paced ${target.limit}/s: ${stats.count} of ${target.sent} delivered`);
    if (stats.duplicates > 0) throw new Error(`paced ${target.limit}/s: ${stats.duplicates} events delivered twice`);
    const arrivals = [...(await ctx.receiver.times(`${target.channel} `)).values()].sort((a, b) => a - b);
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    const seconds = (arrivals.at(-1)! - arrivals[0]!) / 1000;
    measured.push({
      limit: target.limit,
      sent: target.sent,
      seconds,
      achieved: (arrivals.length - 1) / seconds,
      busiestSecond: busiestWindow(arrivals, 1000),
      shortestGapMs: Math.min(...gaps),
      gapsMs: { p1: percentile(gaps, 1), p50: percentile(gaps, 50) },
      arrivalsMs: arrivals.map((at) => Math.round((at - arrivals[0]!) * 10) / 10),
    });
  }
  return measured;
}

function rows(mode: string, measured: PacedTarget[]): Row[] {
  return measured.flatMap((target) => {
    const reference = `max_per_second = ${fmt(target.limit)}`;
    return [
      ratioRow({
        figure: '7',
        what: `Busiest sliding second at a target paced at ${fmt(target.limit)}/s, ${mode}, four paced targets at once (${fmt(target.sent)} deliveries; gaps between receipts p1 / p50 ${fmt(target.gapsMs.p1, 1)} / ${fmt(target.gapsMs.p50, 1)} ms, shortest ${fmt(target.shortestGapMs, 1)} ms)`,
        measured: `${fmt(target.busiestSecond)} POSTs`,
        reference,
        ratio: target.busiestSecond / target.limit,
        goal: { atMost: 1 },
      }),
      ratioRow({
        figure: '7',
        what: `Achieved rate at that target, ${mode}: first to last receipt (${fmt(target.seconds, 1)} s)`,
        measured: `${fmt(target.achieved, 2)} POSTs/s`,
        reference,
        ratio: target.achieved / target.limit,
        ...(target.limit === 20 ? { goal: { atLeast: 0.9 } } : {}),
      }),
    ];
  });
}

/** In the production shape: `webUrl` is a web process whose workers run with the default pacing. */
export async function pacedRateWorkers(ctx: BenchContext, webUrl: string, workerCount: number): Promise<FigureResult> {
  ctx.progress(`figure 7: targets paced at ${PACED_RATES.join(', ')}/s at once, web + ${workerCount} workers`);
  const measured = await pacedTargets(ctx, webUrl, 'w');
  ctx.progress(`  busiest seconds ${measured.map((t) => `${t.busiestSecond}/${t.limit}`).join(', ')}`);
  return { data: { pacedRateWorkers: measured }, rows: rows(`PostgreSQL + Redis, web + ${workerCount} workers`, measured) };
}

/** Embedded: one web process on PGlite, its pacer in process. */
export async function pacedRateEmbedded(ctx: BenchContext): Promise<FigureResult> {
  const web = await ctx.services.start('web', { ...ctx.commonEnv, DATA_DIR: ctx.tempDir('pglite-paced') }, 'web (PGlite, default pacing)');
  try {
    ctx.progress(`figure 7: targets paced at ${PACED_RATES.join(', ')}/s at once, embedded`);
    const measured = await pacedTargets(ctx, web.url, 'e');
    ctx.progress(`  busiest seconds ${measured.map((t) => `${t.busiestSecond}/${t.limit}`).join(', ')}`);
    return { data: { pacedRateEmbedded: measured }, rows: rows('embedded (PGlite, one process)', measured) };
  } finally {
    await ctx.services.stop(web);
  }
}
