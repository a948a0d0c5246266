import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DeliveryJobData } from '../../src/domain/delivery.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Database } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { createDeliveryWrites } from '../../src/workers/deliveryWrites.js';
import { collectingQueue, issueKey } from '../support/app.js';
import { engines, useTestStore, newContactDeliveries } from '../support/databases.js';
import { newAccount } from '../support/http.js';

/** Outcome writes keep hook health; the rule here never disables. */
const health = { rule: { afterMs: 86_400_000, minFailures: 1_000_000 }, metrics: createMetrics() };

const log = pino({ level: 'silent' });
/** Claims park nothing: a queue that only keeps what it is given. */
const parking = { queue: collectingQueue<DeliveryJobData>().queue, keepsDelayedJobs: true };
let phone = 4155550000;

/**
 * The claim is the at-most-once guarantee: a queued delivery becomes `sending` for one claimant
 * only. The same claimant asking again (its first answer lost with the connection) gets it back;
 * anyone else never does. Claims and outcomes of concurrent deliveries are written in batches
 * (group commit): no batching may lose or double one.
 */
describe.each(engines())('claiming deliveries on %s', (engine) => {
  const t = useTestStore(engine);

  /** `count` queued deliveries of new events to one new subscription; their ids, the hook's and the key's. */
  async function queuedDeliveries(count: number) {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    const created = await t.store.hooks.create(
      { keyId: key.id, accountId },
      { eventType: 'new_contact', targetUrl: 'https://hooks.example.com/claim', maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
      10,
    );
    if (created.outcome !== 'created') throw new Error(created.outcome);
    const phones = Array.from({ length: count }, () => `+1${phone++}`);
    const ids = (await newContactDeliveries(t.store, accountId, phones)).map((delivery) => delivery.id);
    return { deliveryIds: ids, hookId: created.hook.id, keyId: key.id };
  }

  const statuses = async (ids: string[]) =>
    (await t.db.query<{ status: string }>('SELECT status FROM deliveries WHERE id = ANY($1::uuid[]) ORDER BY id', [ids])).rows.map((row) => row.status);

  it('gives claims to their claimant again, and to nobody else', async () => {
    const { deliveryIds } = await queuedDeliveries(3);
    const [mine, theirs] = [randomUUID(), randomUUID()];
    const first = await t.store.deliveries.claim(deliveryIds, mine);
    expect(first.map((row) => row.delivery_id).sort()).toStrictEqual([...deliveryIds].sort());
    expect(first[0]).toMatchObject({ target_url: 'https://hooks.example.com/claim', event_type: 'new_contact' });
    expect(JSON.parse(first[0]!.data)).toMatchObject({ source: 'crm' });
    expect(await t.store.deliveries.claim(deliveryIds, theirs)).toStrictEqual([]);
    const again = await t.store.deliveries.claim(deliveryIds.slice(0, 1), mine);
    expect(again[0]?.attempted_at).toStrictEqual(first.find((row) => row.delivery_id === deliveryIds[0])?.attempted_at);
  });

  it('lets exactly one of many concurrent claimants have each delivery', async () => {
    const { deliveryIds } = await queuedDeliveries(10);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.store.deliveries.claim(i % 2 ? deliveryIds : [...deliveryIds].reverse(), randomUUID())),
    );
    const claimed = answers.flat().map((row) => row.delivery_id);
    expect(claimed.sort()).toStrictEqual([...deliveryIds].sort());
  });

  it('lets nobody claim under a deleted subscription or a revoked key, and drops such deliveries', async () => {
    const unsubscribed = await queuedDeliveries(1);
    await t.store.hooks.deleteGone(unsubscribed.hookId);
    expect(await t.store.deliveries.claim(unsubscribed.deliveryIds, randomUUID())).toStrictEqual([]);

    const revoked = await queuedDeliveries(1);
    await t.store.keys.revoke(revoked.keyId);
    expect(await t.store.deliveries.claim(revoked.deliveryIds, randomUUID())).toStrictEqual([]);
    await t.store.deliveries.dropUnclaimable([...unsubscribed.deliveryIds, ...revoked.deliveryIds]);
    expect(await statuses([...unsubscribed.deliveryIds, ...revoked.deliveryIds])).toStrictEqual([]);
  });

  it('keeps a batch claimed under its token when the answer is lost, so its claims are never lost', async () => {
    const { deliveryIds } = await queuedDeliveries(4);
    // The claim commits, then its answer is lost once (the connection drops as it commits).
    let lost = false;
    const store: Store = {
      ...t.store,
      urgentDeliveries: {
        ...t.store.urgentDeliveries,
        async claim(ids, token) {
          const rows = await t.store.urgentDeliveries.claim(ids, token);
          if (lost) return rows;
          lost = true;
          throw new Error('connection terminated');
        },
      },
    };
    const writes = createDeliveryWrites(store, parking, log, new AbortController().signal, health);
    const claimed = await Promise.all(deliveryIds.map((id) => writes.claim.submit(id)));
    expect(lost).toBe(true);
    expect(claimed.map((row) => row?.delivery_id)).toStrictEqual(deliveryIds);
    expect(await statuses(deliveryIds)).toStrictEqual(deliveryIds.map(() => 'sending'));
  });

  it('claims a burst in statements of at most 64, each delivery once', async () => {
    const { deliveryIds } = await queuedDeliveries(150);
    const statementSizes: number[] = [];
    const store: Store = {
      ...t.store,
      urgentDeliveries: {
        ...t.store.urgentDeliveries,
        claim(ids, token) {
          statementSizes.push(ids.length);
          return t.store.urgentDeliveries.claim(ids, token);
        },
      },
    };
    const writes = createDeliveryWrites(store, parking, log, new AbortController().signal, health);
    const claimed = await Promise.all(deliveryIds.map((id) => writes.claim.submit(id)));
    expect(claimed.map((row) => row?.delivery_id)).toStrictEqual(deliveryIds);
    expect(statementSizes.reduce((sum, size) => sum + size, 0)).toBe(150);
    expect(Math.max(...statementSizes)).toBeLessThanOrEqual(64);
    expect(await statuses(deliveryIds)).toStrictEqual(deliveryIds.map(() => 'sending'));
  });

  it('plans claims and outcomes once for all their calls, and a statement with LIMIT $n on each call', async () => {
    const { deliveryIds } = await queuedDeliveries(2);
    // One call at a time: each pool then reuses the one connection it last used, whose plans
    // pg_prepared_statements shows (on PGlite there is one connection).
    for (const deliveryId of deliveryIds) {
      await t.store.deliveries.claim([deliveryId], randomUUID());
      await t.store.deliveries.record([{ deliveryId, status: 'delivered', responseStatus: 200, durationMs: 1 }], health.rule);
    }
    await t.store.deliveries.takeOverdue(10, 5_000, Date.now());
    const plans = async (db: Database, statement: string) =>
      (
        await db.query<{ generic_plans: number; custom_plans: number }>(
          'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE $1 ORDER BY statement',
          [`%${statement}%`],
        )
      ).rows;
    // Earlier tests ran claims and outcomes too: every one of them was planned once.
    const batchWrites = await plans(t.store.db.genericPlans(), 'locked_rows AS MATERIALIZED');
    expect(batchWrites.length).toBeGreaterThanOrEqual(2);
    for (const statement of batchWrites)
      expect(statement).toStrictEqual({ generic_plans: expect.toSatisfy((n: number) => n >= deliveryIds.length), custom_plans: 0 });
    expect(await plans(t.store.db, 'ORDER BY relay_at LIMIT $1 FOR UPDATE SKIP LOCKED')).toStrictEqual([{ generic_plans: 0, custom_plans: 1 }]);
  });

  it('writes each outcome of a batch on its own delivery, in whatever order the batch lists them', async () => {
    const { deliveryIds } = await queuedDeliveries(4);
    await t.store.deliveries.claim(deliveryIds, randomUUID());
    const outcomes = [
      { status: 'delivered', responseStatus: 201, error: undefined, durationMs: 11 },
      { status: 'failed', responseStatus: 500, error: undefined, durationMs: 22 },
      { status: 'refused', responseStatus: undefined, error: 'private address', durationMs: 33 },
      { status: 'failed', responseStatus: undefined, error: 'timeout', durationMs: 44 },
    ] as const;
    // Listed against id order, so that an outcome written at another's place shows.
    const batch = deliveryIds.map((deliveryId, i) => ({ deliveryId, ...outcomes[i]! })).reverse();
    await t.store.deliveries.record(batch, health.rule);
    const rows = await t.db.query<{ id: string; status: string; response_status: number | null; error: string | null; duration_ms: number }>(
      'SELECT id::text, status, response_status, error, duration_ms FROM deliveries WHERE id = ANY($1::uuid[])',
      [deliveryIds],
    );
    const written = new Map(rows.rows.map((row) => [row.id, row]));
    deliveryIds.forEach((id, i) => {
      const { status, responseStatus, error, durationMs } = outcomes[i]!;
      expect(written.get(id)).toStrictEqual({ id, status, response_status: responseStatus ?? null, error: error ?? null, duration_ms: durationMs });
    });
  });

  it('postpones each delivery of a batch to its own time and place, in whatever order the batch lists them', async () => {
    const { deliveryIds } = await queuedDeliveries(4);
    const base = Date.UTC(2030, 0, 1);
    // Listed against id order, so that a time or place written at another's shows.
    const entries = deliveryIds.map((deliveryId, i) => ({ deliveryId, relayAt: base + (i + 1) * 60_000, place: (i + 1) * 1_000_003 })).reverse();
    await t.store.deliveries.postpone(entries);
    const rows = await t.db.query<{ id: string; relay_at: number; place: number }>(
      'SELECT id::text, (extract(epoch FROM relay_at) * 1000)::float8 AS relay_at, place::float8 AS place FROM deliveries WHERE id = ANY($1::uuid[])',
      [deliveryIds],
    );
    const written = new Map(rows.rows.map((row) => [row.id, row]));
    for (const { deliveryId, relayAt, place } of entries) {
      expect(written.get(deliveryId)).toStrictEqual({ id: deliveryId, relay_at: relayAt, place });
    }
  });

  it('never loses or doubles a claim or an outcome, however concurrent submissions interleave (group commit)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        // Per worker, the deliveries it tries to claim (indexes, repeats allowed) and a pause before each.
        fc.array(fc.array(fc.record({ index: fc.nat(11), pauseMs: fc.integer({ min: 0, max: 3 }) }), { maxLength: 15 }), { minLength: 1, maxLength: 4 }),
        async (count, workers) => {
          const { deliveryIds } = await queuedDeliveries(count);
          const claimedBy = new Map<string, number>();
          const recorded = new Map<string, number>();
          await Promise.all(
            workers.map(async (tries, worker) => {
              const writes = createDeliveryWrites(t.store, parking, log, new AbortController().signal, health);
              await Promise.all(
                tries.map(async ({ index, pauseMs }) => {
                  await new Promise((resolve) => setTimeout(resolve, pauseMs));
                  const id = deliveryIds[index % count]!;
                  const claimed = await writes.claim.submit(id);
                  if (!claimed) return;
                  claimedBy.set(id, (claimedBy.get(id) ?? 0) + 1);
                  // A response status of its own for each (worker, delivery): one written at another's place shows.
                  const responseStatus = 200 + worker * 12 + (index % count);
                  recorded.set(id, responseStatus);
                  await writes.record.submit({ deliveryId: id, status: 'delivered', responseStatus, durationMs: 1 });
                }),
              );
            }),
          );
          const tried = new Set(workers.flat().map(({ index }) => deliveryIds[index % count]!));
          // Every delivery tried was claimed exactly once, by one submission of one worker...
          expect([...claimedBy.entries()].sort()).toStrictEqual([...tried].sort().map((id) => [id, 1]));
          // ...and its outcome is the one its claimant recorded; none was touched that was not tried.
          const rows = (
            await t.db.query<{ id: string; status: string; response_status: number | null }>(
              'SELECT id::text, status, response_status FROM deliveries WHERE id = ANY($1::uuid[])',
              [deliveryIds],
            )
          ).rows;
          for (const row of rows) {
            expect(row.status).toBe(tried.has(row.id) ? 'delivered' : 'queued');
            expect(row.response_status).toBe(tried.has(row.id) ? recorded.get(row.id)! : null);
          }
        },
      ),
      { numRuns: engine === 'pglite' ? 15 : 25 },
    );
  });
});
