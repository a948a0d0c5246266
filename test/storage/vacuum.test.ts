import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUTOVACUUM_THRESHOLDS } from '../../src/storage/vacuum.js';
import { runMaintenancePass, type MaintenanceSettings } from '../../src/workers/maintenance.js';
import { issueKey, storedHook } from '../support/app.js';
import { upsertContact, newContactDeliveries, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const DAY = 86_400_000;
const HOOKS = 10;
const CONTACTS = 30;

const settings: MaintenanceSettings = {
  retentionMs: 30 * DAY,
  stuckAfterMs: DAY,
  maxWaitMs: DAY,
  disableRule: { afterMs: DAY, minFailures: 1_000_000 },
  pauseMs: 0,
};

/**
 * PGlite runs no autovacuum: the maintenance pass does its work. Each claim and each outcome
 * leaves a dead delivery row; past PostgreSQL's own threshold a table is vacuumed, and every
 * table, the catalog's too, once its rows are older than the freeze age (transaction-id
 * wraparound would otherwise make old rows invisible).
 */
describe('vacuum on PGlite', () => {
  const t = useTestStore('pglite');

  /** When each table of the schema and the catalog was last vacuumed. */
  const lastVacuums = async () =>
    (
      await t.db.query<{ name: string; last_vacuum: Date | null; n_dead_tup: number }>(
        `SELECT s.schemaname || '.' || s.relname AS name, s.last_vacuum, s.n_dead_tup FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
         WHERE c.relkind = 'r' AND s.schemaname IN ('public', 'pg_catalog')`,
      )
    ).rows;
  const dbNow = async () => (await t.db.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;

  it('vacuums the tables with more dead rows than the threshold, and only those', async () => {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    for (let i = 0; i < HOOKS; i++) {
      await t.store.hooks.create(
        { keyId: key.id, accountId },
        { eventType: 'new_contact', targetUrl: `https://hooks.example.com/${i}`, maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
        HOOKS,
      );
    }
    const phones = Array.from({ length: CONTACTS }, (_, i) => `+1415555${String(1000 + i)}`);
    const ids = (await newContactDeliveries(t.store, accountId, phones)).map((delivery) => delivery.id);
    expect(ids).toHaveLength(HOOKS * CONTACTS);
    // A claim and an outcome for each: two dead rows per delivery.
    await t.store.urgentDeliveries.claim(ids, randomUUID());
    await t.store.deliveries.record(
      ids.map((deliveryId) => ({ deliveryId, status: 'delivered' as const, responseStatus: 200, durationMs: 1 })),
      settings.disableRule,
    );
    const deadDeliveries = async () =>
      (await lastVacuums()).filter((table) => table.name.startsWith('public.deliveries')).reduce((sum, table) => sum + table.n_dead_tup, 0);
    // The counts reach the statistics once the statements' are flushed (within a second).
    await expect.poll(deadDeliveries, { timeout: 5_000 }).toBeGreaterThan(AUTOVACUUM_THRESHOLDS.deadRows + AUTOVACUUM_THRESHOLDS.deadFraction * ids.length);

    const start = await dbNow();
    const { changed } = await runMaintenancePass(t.store, settings);

    const vacuumed = (await lastVacuums()).filter((table) => table.last_vacuum && table.last_vacuum >= start).map((table) => table.name);
    expect(changed.vacuumed).toBe(vacuumed.length);
    expect(vacuumed.filter((name) => name.startsWith('public.deliveries'))).toHaveLength(1);
    expect(await deadDeliveries()).toBe(0);
    // The keys' table had one insert and nothing dead: not yet.
    expect(vacuumed).not.toContain('public.api_keys');
  });

  it('vacuums every table, the catalog included, once its rows are older than the freeze age', async () => {
    await upsertContact(t.store, newAccount(), { phone: '+14155551000', fields: {} }, 'crm');
    const start = await dbNow();
    const { changed } = await runMaintenancePass(t.store, { ...settings, vacuum: { deadRows: 1e9, deadFraction: 1e9, freezeAge: 0 } });

    const tables = await lastVacuums();
    const notVacuumed = tables.filter((table) => !(table.last_vacuum && table.last_vacuum >= start)).map((table) => table.name);
    expect(notVacuumed).toEqual([]);
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['pg_catalog.pg_class', 'public.contacts']));
    expect(changed.vacuumed).toBe(tables.length);
  }, 30_000);

  it('lets a claim made during the pass go between two VACUUMs, not after the last', async () => {
    const accountId = newAccount();
    await storedHook(t.store, accountId);
    const [delivery] = await newContactDeliveries(t.store, accountId, ['+14155551000']);
    const start = await dbNow();
    const vacuumedSince = async (at: Date) => (await lastVacuums()).filter((table) => table.last_vacuum && table.last_vacuum > at).length;

    // Every table is due (freeze age 0): dozens of VACUUMs, one statement each.
    const pass = runMaintenancePass(t.store, { ...settings, vacuum: { deadRows: 1e9, deadFraction: 1e9, freezeAge: 0 } });
    await expect.poll(() => vacuumedSince(start), { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    const claimed = await t.store.urgentDeliveries.claim([delivery!.id], randomUUID());
    const claimedAt = new Date();
    const { changed } = await pass;

    expect(claimed).toHaveLength(1);
    // The claim waited for the VACUUM then running, not for the rest of the pass.
    expect(await vacuumedSince(claimedAt)).toBeGreaterThan(0);
    expect(await vacuumedSince(start)).toBe(changed.vacuumed);
  }, 30_000);
});
