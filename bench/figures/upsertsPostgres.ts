/**
 * Figure 1 on PostgreSQL: upserts through the API against the raw driver's one-statement upsert
 * at the same pool size and concurrency; and figure 5's contacts series: both, and new-contact
 * delivery latency, as the store grows to 1M contacts. The worker is stopped while upserts are
 * measured, so the figure is the web process's against the driver's; it runs for the latency part.
 */
import type { BenchContext } from '../context.js';
import { newContactLatency } from '../measure/deliveries.js';
import { rawDriverUpsert, upsertPair, type UpsertFigure } from '../measure/upsertPair.js';
import { fmt, growthRows, ratioRow, type FigureResult } from '../results.js';
import { UPSERT_CONNECTIONS, UPSERT_POOL_SIZE, UPSERT_ROUNDS } from '../settings.js';
import { seedContacts } from '../support/seeding.js';
import type { PostgresStack } from '../support/stacks.js';

const CHANNEL = '/c';

export interface ContactPoint {
  size: number;
  actualRows: number;
  api: UpsertFigure;
  direct: UpsertFigure;
  p50: number;
  p99: number;
  /** CPU ms per delivery other processes used during the latency window. */
  other: number;
}

/** The growth series of one store's contact points. */
export function contactGrowth(store: string, rate: number, points: ContactPoint[]) {
  return [
    ...growthRows(
      store,
      `API upserts/s (${UPSERT_CONNECTIONS} conn)`,
      'req/s',
      true,
      points.map((p) => ({ ...p, value: p.api.perSecond, other: p.api.other })),
    ),
    ...growthRows(
      store,
      'direct store upserts/s',
      'upserts/s',
      true,
      points.map((p) => ({ ...p, value: p.direct.perSecond, other: p.direct.other })),
    ),
    // The two above alternate window by window, so their quotient holds still when the host's
    // speed drifts between sizes (one run's raw driver slowed 1.92× at 1M contacts): it is the
    // service's own growth, beyond what the same statements cost PostgreSQL at that size.
    ...growthRows(
      store,
      'API upserts ÷ direct, same windows',
      '×',
      true,
      points.map((p) => ({ ...p, value: p.api.perSecond / p.direct.perSecond })),
    ),
    ...growthRows(
      store,
      `new_contact delivery latency p50 at ${rate}/s`,
      'ms',
      false,
      points.map((p) => ({ ...p, value: p.p50 })),
    ),
    ...growthRows(
      store,
      `new_contact delivery latency p99 at ${rate}/s`,
      'ms',
      false,
      points.map((p) => ({ ...p, value: p.p99 })),
    ),
  ];
}

/** `rate` is the latency figure's (half the figure-2 peak). */
export async function upsertsPostgres(ctx: BenchContext, stack: PostgresStack, rate: number): Promise<FigureResult> {
  const { sql, settings } = ctx;
  const benchKey = await stack.client.newKey('bench');
  const latencyKey = await stack.client.newKey('bench-lat');
  await stack.client.subscribe(latencyKey, 'new_contact', `${ctx.receiver.url}${CHANNEL}`);
  const reference = rawDriverUpsert(ctx.database.url, 'bench');
  await stack.stopWorkers();
  const points: ContactPoint[] = [];
  try {
    let seeded = 0;
    for (const size of settings.contactSizes) {
      ctx.progress(`seeding contacts to ${fmt(size)}`);
      await seedContacts(sql, 'bench', seeded, size);
      seeded = size;
      await sql('VACUUM ANALYZE contacts');
      await sql('CHECKPOINT');
      const actualRows = Number(((await sql('SELECT count(*)::int AS n FROM contacts')).rows[0] as { n: number }).n);
      const duration = size === settings.contactSizes[0] ? settings.durations.upsert : settings.durations.upsertGrowth;
      ctx.progress(`figure 1: upserts with ${fmt(actualRows)} contacts, ${duration} ms each`);
      const { api, direct: viaDriver } = await upsertPair(ctx, stack.web.url, benchKey, reference, seeded, duration, `PostgreSQL, ${fmt(actualRows)} contacts`);
      ctx.progress(`  API ${fmt(api.perSecond)}/s, direct ${fmt(viaDriver.perSecond)}/s`);
      await stack.startWorkers(1);
      const measured = await newContactLatency(ctx, stack.web.url, latencyKey, CHANNEL, rate, `PostgreSQL, ${fmt(actualRows)} contacts`);
      points.push({ size, actualRows, api, direct: viaDriver, p50: measured.p50, p99: measured.p99, other: measured.other });
      await stack.stopWorkers();
    }
  } finally {
    await stack.stopWorkers();
  }
  const first = points[0]!;
  return {
    data: { contactGrowthPostgres: points },
    rows: [
      ratioRow({
        figure: '1',
        what: `Upsert throughput, PostgreSQL: POST /api/v1/contacts, ${UPSERT_CONNECTIONS} connections, ${fmt(first.actualRows)} contacts, ${settings.durations.upsert / 1000} s each in ${UPSERT_ROUNDS} alternating rounds (API ${first.api.rounds.join(' / ')}, direct ${first.direct.rounds.join(' / ')} per s; ${fmt(first.api.inserted)} inserted / ${fmt(first.api.updated)} updated)`,
        measured: `${fmt(first.api.perSecond)} req/s`,
        reference: `${fmt(first.direct.perSecond)} upserts/s: the raw driver, one INSERT … ON CONFLICT … RETURNING per upsert through pg with a pool of ${UPSERT_POOL_SIZE} (the web process's DATABASE_POOL_SIZE here), ${UPSERT_CONNECTIONS} concurrent`,
        ratio: first.api.perSecond / first.direct.perSecond,
        goal: { atLeast: 0.8 },
      }),
    ],
    growth: contactGrowth('contacts (PostgreSQL)', rate, points),
    notes: [
      "Figure 1 (PostgreSQL): the web process runs with REDIS_URL, as in production (the rate limit counts in Redis); the worker is stopped during the upsert windows. The bench account has no new_contact subscriber, so each new contact's event is recorded for the feed with no outbox row and no job.",
      `Figure 1 reference: the bench process upserts the same phone mix (uniform over the seeded phones, or new) with one INSERT … ON CONFLICT (account_id, phone) DO UPDATE … RETURNING through pg, a pool of ${UPSERT_POOL_SIZE} and ${UPSERT_CONNECTIONS} loops; the API writes the contact and its new_contact event in one statement as well, behind HTTP, the API key, validation, the rate limit and the request log. The reference's pool is opened for its window and closed after; the two pools of ${UPSERT_POOL_SIZE} together are all of PostgreSQL's 100 connections.`,
    ],
  };
}
