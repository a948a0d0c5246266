/**
 * Figure 7: the rate one paced target actually sees, against its limit. A CRM sync of many new
 * contacts at once, to an account with one new_contact hook at the default pace
 * (DELIVERY_RATE_PER_TARGET): the receiver's achieved rate from first to last receipt, and the
 * busiest sliding second, which is what a receiver's own rate limiter counts. Goal: within 10%
 * of the limit and never over it.
 */
import { Pool } from 'undici';
import { busiestWindow, percentile } from '../../kit/statistics.js';
import type { BenchContext } from '../context.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { PACED_BURST, SERVICE_DEFAULTS, UPSERT_CONNECTIONS } from '../settings.js';
import { crmSync, runCount, serviceClient } from '../support/clients.js';

const ACCOUNT = 'paced';

/** A burst of `burst` CRM syncs to `webUrl`; the arrivals of their deliveries on `channel`. */
async function pacedBurst(ctx: BenchContext, webUrl: string, channel: string, burst: number) {
  const limit = SERVICE_DEFAULTS.DELIVERY_RATE_PER_TARGET;
  const client = serviceClient(webUrl, ctx.token);
  await client.subscribe(await client.newKey(ACCOUNT), 'new_contact', `${ctx.receiver.url}${channel}`);
  await ctx.receiver.reset();
  const pool = new Pool(webUrl, { connections: UPSERT_CONNECTIONS });
  const ingestStarted = performance.now();
  try {
    await runCount(UPSERT_CONNECTIONS, burst, () => crmSync(pool, ctx.token, ACCOUNT, ctx.phones.newPhone()));
  } finally {
    await pool.close();
  }
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  // At the limit the burst takes burst / limit seconds; allow twice that and a minute.
  const stats = await ctx.receiver.waitForCount(burst, (2 * burst * 1000) / limit + 60_000, channel);
  if (stats.count < burst) throw new Error(`paced burst: ${stats.count} of ${burst} delivered`);
  if (stats.duplicates > 0) throw new Error(`paced burst: ${stats.duplicates} events delivered twice`);
  const arrivals = [...(await ctx.receiver.times(`${channel} `)).values()].sort((a, b) => a - b);
  const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
  const seconds = (arrivals.at(-1)! - arrivals[0]!) / 1000;
  return {
    limit,
    burst,
    ingestSeconds,
    seconds,
    /** Receipts per second from the first to the last: n - 1 intervals. */
    achieved: (arrivals.length - 1) / seconds,
    busiestSecond: busiestWindow(arrivals, 1000),
    shortestGapMs: Math.min(...gaps),
    /** Gaps between consecutive receipts: at the limit every one is 1000 / limit ms. */
    gapsMs: { p1: percentile(gaps, 1), p10: percentile(gaps, 10), p50: percentile(gaps, 50), p90: percentile(gaps, 90), p99: percentile(gaps, 99) },
  };
}

type Burst = Awaited<ReturnType<typeof pacedBurst>>;

function rows(mode: string, measured: Burst) {
  const { limit } = measured;
  const reference = `DELIVERY_RATE_PER_TARGET = ${fmt(limit)}/s (the default)`;
  return [
    ratioRow({
      figure: '7',
      what: `Achieved rate at one paced target, ${mode}: a CRM sync of ${fmt(measured.burst)} new contacts at once (ingested in ${fmt(measured.ingestSeconds, 1)} s) to one new_contact hook at the default pace; first to last receipt (${fmt(measured.seconds, 1)} s)`,
      measured: `${fmt(measured.achieved, 2)} POSTs/s`,
      reference,
      ratio: measured.achieved / limit,
      goal: { between: [0.9, 1] },
    }),
    ratioRow({
      figure: '7',
      what: `Busiest sliding second at that target, ${mode} (gaps between receipts p10 / p50 / p90 ${fmt(measured.gapsMs.p10, 1)} / ${fmt(measured.gapsMs.p50, 1)} / ${fmt(measured.gapsMs.p90, 1)} ms, shortest ${fmt(measured.shortestGapMs, 1)} ms; spacing at the limit ${fmt(1000 / limit, 1)} ms)`,
      measured: `${fmt(measured.busiestSecond)} POSTs`,
      reference,
      ratio: measured.busiestSecond / limit,
      goal: { atMost: 1 },
    }),
  ];
}

const burstSize = (ctx: BenchContext) => Math.max(100, Math.round(PACED_BURST * ctx.settings.scale));

/** In the production shape: `webUrl` is a web process whose workers run with the default pacing. */
export async function pacedRateWorkers(ctx: BenchContext, webUrl: string, workerCount: number): Promise<FigureResult> {
  ctx.progress(`figure 7: a burst of ${burstSize(ctx)} to one paced target, web + ${workerCount} workers`);
  const measured = await pacedBurst(ctx, webUrl, '/p', burstSize(ctx));
  ctx.progress(`  ${fmt(measured.achieved, 2)}/s over ${fmt(measured.seconds, 1)} s, busiest second ${measured.busiestSecond}`);
  return { data: { pacedRateWorkers: measured }, rows: rows(`PostgreSQL + Redis, web + ${workerCount} workers`, measured) };
}

/** Embedded: one web process on PGlite, its pacer in process, with the default pacing. */
export async function pacedRateEmbedded(ctx: BenchContext): Promise<FigureResult> {
  const web = await ctx.services.start('web', { ...ctx.commonEnv, DATA_DIR: ctx.tempDir('pglite-paced') }, 'web (PGlite, default pacing)');
  try {
    ctx.progress(`figure 7: a burst of ${burstSize(ctx)} to one paced target, embedded`);
    const measured = await pacedBurst(ctx, web.url, '/pe', burstSize(ctx));
    ctx.progress(`  ${fmt(measured.achieved, 2)}/s over ${fmt(measured.seconds, 1)} s, busiest second ${measured.busiestSecond}`);
    return { data: { pacedRateEmbedded: measured }, rows: rows('embedded (PGlite, one process)', measured) };
  } finally {
    await ctx.services.stop(web);
  }
}
