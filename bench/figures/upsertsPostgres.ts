/**
 * Figure 1 on PostgreSQL: upserts through the API against the store's own upsert through the
 * driver; and figure 5's contacts series: both, and new-contact delivery latency, as the store
 * grows to 1M contacts. The worker is stopped while upserts are measured, so the figure is the
 * web process's against the driver's; it runs for the latency part.
 */
import { pino } from 'pino';
import { openPostgres } from '../../src/storage/database.js';
import type { BenchContext } from '../context.js';
import { newContactLatency } from '../measure/deliveries.js';
import { upsertPair, type UpsertFigure } from '../measure/upsertPair.js';
import { fmt, growthRows, ratioRow, type FigureResult } from '../results.js';
import { SERVICE_DEFAULTS, UPSERT_CONNECTIONS, UPSERT_ROUNDS } from '../settings.js';
import { seedContacts } from '../support/seeding.js';
import { runQueue, type PostgresStack } from '../support/stacks.js';

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

/** The four growth series of one store's contact points. */
export function contactGrowth(store: string, rate: number, points: ContactPoint[]) {
  return [
    ...growthRows(store, `API upserts/s (${UPSERT_CONNECTIONS} conn)`, 'req/s', true, points.map((p) => ({ ...p, value: p.api.perSecond, other: p.api.other }))),
    ...growthRows(store, 'direct store upserts/s', 'upserts/s', true, points.map((p) => ({ ...p, value: p.direct.perSecond, other: p.direct.other }))),
    ...growthRows(store, `new_contact delivery latency p50 at ${rate}/s`, 'ms', false, points.map((p) => ({ ...p, value: p.p50 }))),
    ...growthRows(store, `new_contact delivery latency p99 at ${rate}/s`, 'ms', false, points.map((p) => ({ ...p, value: p.p99 }))),
  ];
}

/** `rate` is the latency figure's (half the figure-2 peak). */
export async function upsertsPostgres(ctx: BenchContext, stack: PostgresStack, rate: number): Promise<FigureResult> {
  const { sql, settings } = ctx;
  const benchKey = await stack.client.newKey('bench');
  const latencyKey = await stack.client.newKey('bench-lat');
  await stack.client.subscribe(latencyKey, 'new_contact', `${ctx.receiver.url}${CHANNEL}`);
  const events = runQueue(ctx, 'events');
  // The pool the web process opens: DATABASE_POOL_SIZE, at its default.
  const direct = openPostgres(ctx.database.url, { max: SERVICE_DEFAULTS.DATABASE_POOL_SIZE, log: pino({ level: 'warn' }) });
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
      const { api, direct: viaDriver } = await upsertPair(ctx, stack.web.url, benchKey, direct, seeded, duration, `PostgreSQL, ${fmt(actualRows)} contacts`);
      ctx.progress(`  API ${fmt(api.perSecond)}/s, direct ${fmt(viaDriver.perSecond)}/s`);
      // The upserts' new_contact events have no subscriber; they are settled here instead of
      // being worked off by the worker during the latency measurement.
      await sql(`UPDATE events SET dispatched_at = clock_timestamp() WHERE dispatched_at IS NULL AND account_id = 'bench'`);
      await events.drain(true);
      await stack.startWorkers(1);
      const measured = await newContactLatency(ctx, stack.web.url, latencyKey, CHANNEL, rate, `PostgreSQL, ${fmt(actualRows)} contacts`);
      points.push({ size, actualRows, api, direct: viaDriver, p50: measured.p50, p99: measured.p99, other: measured.other });
      await stack.stopWorkers();
    }
  } finally {
    await direct.close();
    await events.close();
  }
  const first = points[0]!;
  return {
    data: { contactGrowthPostgres: points },
    rows: [
      ratioRow({
        figure: '1',
        what: `Upsert throughput, PostgreSQL: POST /api/v1/contacts, ${UPSERT_CONNECTIONS} connections, ${fmt(first.actualRows)} contacts, ${settings.durations.upsert / 1000} s each in ${UPSERT_ROUNDS} alternating rounds (API ${first.api.rounds.join(' / ')}, direct ${first.direct.rounds.join(' / ')} per s; ${fmt(first.api.inserted)} inserted / ${fmt(first.api.updated)} updated)`,
        measured: `${fmt(first.api.perSecond)} req/s`,
        reference: `${fmt(first.direct.perSecond)} upserts/s: contactQueries(db).upsert through openPostgres with the service's pool (DATABASE_POOL_SIZE=${SERVICE_DEFAULTS.DATABASE_POOL_SIZE}), ${UPSERT_CONNECTIONS} concurrent`,
        ratio: first.api.perSecond / first.direct.perSecond,
        goal: { atLeast: 0.7 },
      }),
    ],
    growth: contactGrowth('contacts (PostgreSQL)', rate, points),
    notes: [
      'Figure 1 (PostgreSQL): the web process runs with REDIS_URL, so each new contact is also enqueued to Redis, as in production; the worker is stopped during the upsert windows (its work is figure 2), and the new_contact events of those upserts, which have no subscriber, are then marked dispatched and their jobs drained.',
      "Figure 1 reference: the bench process calls the store's own contactQueries(db).upsert (BEGIN / INSERT … ON CONFLICT DO NOTHING / INSERT event, or SELECT … FOR UPDATE / UPDATE / COMMIT) through openPostgres with DATABASE_POOL_SIZE connections, the pool the service itself opens, with the same phone mix (uniform over the seeded phones, or new).",
    ],
  };
}
