import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { queuedRange } from '../../src/storage/deliveryIds.js';
import { issueKey } from '../support/app.js';
import { engines, fanOutOutbox, recordEvents, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const HOOKS = 100;
const EVENTS = 20;
const BATCH = 50;

/** A node of EXPLAIN (FORMAT JSON): the fields read here. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows each table's scans read in a plan: returned and filtered out, every loop. */
function rowsRead(node: PlanNode, read: Record<string, number> = {}) {
  const table = node['Relation Name']?.replace(/_.*/, '');
  if (table && node['Node Type'] !== 'ModifyTable') {
    const perLoop = node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
    read[table] = (read[table] ?? 0) + perLoop * node['Actual Loops'];
  }
  for (const child of node.Plans ?? []) rowsRead(child, read);
  return read;
}

/** A parameter as an SQL literal for EXECUTE (ids, words, numbers and ISO times only: no quotes in them). */
const literal = (value: unknown): string =>
  Array.isArray(value) ? `'{${value.map((v) => (v === null ? 'NULL' : String(v))).join(',')}}'` : `'${String(value)}'`;

/**
 * What a statement reads when run on its generic plan (as the engine runs it: Database.genericPlans),
 * in a transaction rolled back; `before` runs first in it.
 */
async function readByGenericPlan(db: Database, text: string, params: unknown[], before = '') {
  let read: Record<string, number> = {};
  const rolledBack = new Error('rolled back');
  await db
    .transaction(async (tx) => {
      await tx.exec(`SET LOCAL plan_cache_mode = force_generic_plan; ${before}`);
      // A prepared statement outlives the transaction: it is deallocated before the rollback.
      await tx.exec(`PREPARE measured AS ${text}`);
      const { rows } = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE measured(${params.map(literal).join(', ')})`,
      );
      await tx.exec('DEALLOCATE measured');
      read = rowsRead(rows[0]!['QUERY PLAN'][0].Plan);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return read;
}

/**
 * Every delivery of an event has the event's time as queued_at, and PGlite's clock gives tens of
 * events the same millisecond. The claim and the outcome write must find each delivery, and each
 * event, by its key: looked up by time, each would be found among all of that moment's rows (a
 * claim of 50 deliveries of an event sent to 1,000 subscriptions read 50,000 rows). The claim
 * finds each delivery's subscription by its key too, never the other way round (each of the key's
 * subscriptions, then every locked delivery again for each). Fresh tables, as PGlite's always
 * are: no statistics.
 */
describe.each(engines())('finding deliveries by their key on %s', (engine) => {
  const t = useTestStore(engine);

  it('claims and records a batch reading each delivery, its event and its subscription by key, about once each', async () => {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    for (let i = 0; i < HOOKS; i++) {
      const hook = { eventType: 'new_contact' as const, targetUrl: `https://hooks.example.com/${i}`, maxPerSecond: null, secret: 'whsec_c2VjcmV0' };
      await t.store.hooks.create({ keyId: key.id, accountId }, hook, HOOKS);
    }
    // Events in the outbox, all of them at one moment, as PGlite stamps them; then every delivery has that time too.
    // A millisecond on, so that every subscription, stamped to the microsecond, existed when they fired.
    await recordEvents(t.db, accountId, EVENTS, { at: new Date(Date.now() + 1) });
    const ids = (await fanOutOutbox(t.store, t.db)).map((delivery) => delivery.id);
    expect(ids).toHaveLength(HOOKS * EVENTS);

    // One claim and one outcome through the store, so that their statements are prepared...
    const first = ids.slice(0, BATCH);
    await t.store.deliveries.claim(first, randomUUID());
    await t.store.deliveries.record(
      first.map((deliveryId) => ({ deliveryId, status: 'delivered' as const, responseStatus: 200, durationMs: 1 })),
      { afterMs: 86_400_000, minFailures: 1_000_000 },
    );
    const texts = (
      await t.store.db
        .genericPlans()
        .query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%locked_rows AS MATERIALIZED%'`)
    ).rows.map((row) => row.statement);
    const claimText = texts.find((text) => text.includes("SET status = 'sending'"))!;
    const recordText = texts.find((text) => text.includes('hook_outcome_hours'))!;

    // ...then the next batch's, read on their generic plans.
    const next = ids.slice(BATCH, 2 * BATCH);
    const range = queuedRange(next);
    const claimRead = await readByGenericPlan(t.db, claimText, [next, randomUUID(), ...range]);
    const outcomes = [next, next.map(() => 'delivered'), next.map(() => 200), next.map(() => null), next.map(() => 1)];
    const claimFirst = `UPDATE deliveries SET status = 'sending', attempted_at = clock_timestamp() WHERE id IN (${next.map((id) => `'${id}'`).join(', ')})`;
    const recordRead = await readByGenericPlan(t.db, recordText, [...outcomes, 86_400_000, 1_000_000, ...range], claimFirst);

    // Each statement reads the batch once to lock it and once to write it; events once per delivery.
    expect(claimRead).toMatchObject({
      deliveries: expect.toSatisfy((n: number) => n <= 2 * BATCH),
      events: expect.toSatisfy((n: number) => n <= BATCH),
      hooks: expect.toSatisfy((n: number) => n <= BATCH),
    });
    expect(recordRead).toMatchObject({ deliveries: expect.toSatisfy((n: number) => n <= 2 * BATCH) });
  }, 60_000);
});
