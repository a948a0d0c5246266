/**
 * Figure 1 on PGlite (embedded: the web process also runs the in-process delivery of each
 * new_contact): upserts through the API against the store's own upsert on PGlite in this
 * process; and figure 5's contacts series on PGlite.
 */
import { openPglite } from '../../src/storage/pglite.js';
import { migrate } from '../../src/storage/migrate.js';
import type { BenchContext } from '../context.js';
import { newContactLatency } from '../measure/deliveries.js';
import { upsertPair, type UpsertReference } from '../measure/upsertPair.js';
import { contactQueries } from '../../src/storage/contacts.js';
import { RELAY_GRACE_MS } from '../../src/domain/delivery.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';
import { ENGINE_ENV, PGLITE_LATENCY_RATE, UPSERT_CONNECTIONS, UPSERT_ROUNDS } from '../settings.js';
import { serviceClient } from '../support/clients.js';
import { seedContacts } from '../support/seeding.js';
import { contactGrowth, type ContactPoint } from './upsertsPostgres.js';

const CHANNEL = '/c';
const LABEL = 'web (PGlite, embedded delivery)';

/** Seeds contacts [from, to) into the PGlite store in `dataDir` (no process may hold it meanwhile); returns its row count. */
async function seedStore(dataDir: string, from: number, to: number) {
  const db = await openPglite(dataDir);
  try {
    await migrate(db);
    await seedContacts((text, params) => db.query(text, params), 'bench', from, to);
    await db.exec('VACUUM ANALYZE contacts');
    return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM contacts')).rows[0]!.n);
  } finally {
    await db.close();
  }
}

export async function upsertsPglite(ctx: BenchContext): Promise<FigureResult> {
  const { settings } = ctx;
  const webDir = ctx.tempDir('pglite-web');
  const direct = await openPglite(ctx.tempDir('pglite-direct'));
  const env = { ...ctx.commonEnv, ...ENGINE_ENV, DATA_DIR: webDir };
  const points: ContactPoint[] = [];
  let keys: { bench: string; latency: string } | undefined;
  try {
    await migrate(direct);
    let seeded = 0;
    for (const size of settings.pgliteContactSizes) {
      ctx.progress(`PGlite: seeding contacts to ${fmt(size)}`);
      const seedStarted = performance.now();
      // The web process holds DATA_DIR while it runs, so its store is seeded between runs.
      const actualRows = await seedStore(webDir, seeded, size);
      await seedContacts((text, params) => direct.query(text, params), 'bench', seeded, size);
      await direct.exec('VACUUM ANALYZE contacts');
      seeded = size;
      ctx.progress(`  seeded in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`);
      const web = await ctx.services.start('web', env, LABEL);
      try {
        if (!keys) {
          const client = serviceClient(web.url, ctx.token);
          keys = { bench: await client.newKey('bench'), latency: await client.newKey('bench-lat') };
          await client.subscribe(keys.latency, 'new_contact', `${ctx.receiver.url}${CHANNEL}`);
        }
        const duration = size === settings.pgliteContactSizes[0] ? settings.durations.upsertPglite : settings.durations.upsertGrowth;
        ctx.progress(`PGlite figure 1: upserts with ${fmt(actualRows)} contacts, ${duration} ms each`);
        const inProcessStore: UpsertReference = {
          pauseMs: 0,
          open: async () => ({
            upsert: async (phone) => {
              const results = await contactQueries(direct).upsert(
                [{ accountId: 'bench', input: { phone, fields: { name: `Bench ${phone.slice(-4)}` } }, source: 'bench' }],
                RELAY_GRACE_MS,
              );
              return results[0]!.action === 'inserted' ? 'inserted' : 'updated';
            },
            close: async () => {},
          }),
        };
        const { api, direct: inProcess } = await upsertPair(ctx, web.url, keys.bench, inProcessStore, seeded, duration, `PGlite, ${fmt(actualRows)} contacts`);
        ctx.progress(`  API ${fmt(api.perSecond)}/s, direct ${fmt(inProcess.perSecond)}/s`);
        const measured = await newContactLatency(ctx, web.url, keys.latency, CHANNEL, PGLITE_LATENCY_RATE, `PGlite, ${fmt(actualRows)} contacts`);
        points.push({ size, actualRows, api, direct: inProcess, p50: measured.p50, p99: measured.p99, other: measured.other });
      } finally {
        await ctx.services.stop(web);
      }
    }
  } finally {
    await direct.close();
  }
  const first = points[0]!;
  return {
    data: { contactGrowthPglite: points },
    rows: [
      ratioRow({
        figure: '1',
        what: `Upsert throughput, PGlite (embedded; the web process also runs the in-process delivery job of each new_contact): ${UPSERT_CONNECTIONS} connections, ${fmt(first.actualRows)} contacts, ${fmt(settings.durations.upsertPglite / 1000)} s each in ${UPSERT_ROUNDS} rounds (API ${first.api.rounds.join(' / ')}, direct ${first.direct.rounds.join(' / ')} per s)`,
        measured: `${fmt(first.api.perSecond)} req/s`,
        reference: `${fmt(first.direct.perSecond)} upserts/s: contactQueries(db).upsert on PGlite in-process, ${UPSERT_CONNECTIONS} concurrent`,
        ratio: first.api.perSecond / first.direct.perSecond,
        goalText: { text: 'reported' },
      }),
    ],
    growth: contactGrowth('contacts (PGlite)', PGLITE_LATENCY_RATE, points),
    notes: settings.pgliteContactSizes.includes(1_000_000)
      ? []
      : [
          'PGlite growth stops at 100k contacts: seeding 1M into two PGlite stores would take a large share of the 10-minute budget (BENCH_PGLITE_SIZES=1000,100000,1000000 runs it).',
        ],
  };
}
