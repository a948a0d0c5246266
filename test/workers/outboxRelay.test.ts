import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLocalQueue } from '../../src/queue/localQueue.js';
import type { Store } from '../../src/storage/store.js';
import { startFanOut } from '../../src/workers/fanOut.js';
import type { DeliveryJob } from '../../src/workers/jobs.js';
import { runMaintenancePass } from '../../src/workers/maintenance.js';
import { startOutboxRelay } from '../../src/workers/outboxRelay.js';
import { issueKey } from '../support/app.js';
import { engines, useTestStore, upsertContact } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';

const log = pino({ level: 'silent' });
const DAY = 86_400_000;

/** A local queue that only records the deliveries it is handed, finishing each at once. */
function recordingQueue() {
  const seen = new Set<string>();
  const places = new Map<string, number | undefined>();
  const queue = createLocalQueue<DeliveryJob>(
    async (job) => {
      seen.add(job.deliveryId);
      places.set(job.deliveryId, job.place);
    },
    { capacity: 100_000, concurrency: 8, log, name: 'deliveries' },
  );
  return { queue, seen, places };
}

/** An account with one new_contact subscription. */
async function subscribedAccount(store: Store, accountId: string) {
  const key = await issueKey(store, accountId, {});
  const created = await store.hooks.create(
    { keyId: key.id, accountId },
    { eventType: 'new_contact', targetUrl: 'https://hooks.example.com/a', maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
    10,
  );
  if (created.outcome !== 'created') throw new Error(created.outcome);
  return created.hook.id;
}

/**
 * The outbox reaches every piece of pending work, however much there is: fan-out takes every
 * event not yet fanned out, batch after batch, and the relay hands back every overdue queued
 * delivery, page after page, with the place it waited for, and leaves alone those waiting for a
 * later time.
 */
describe.each(engines())('the outbox on %s', (engine) => {
  const t = useTestStore(engine);

  it('fans out every event waiting in the outbox, far past one batch, each once', async () => {
    const accountId = 'outbox-fan-out';
    await subscribedAccount(t.store, accountId);
    for (let i = 0; i < 357; i++) await upsertContact(t.store, accountId, { phone: `+1415300${String(i).padStart(4, '0')}`, fields: {} }, 'crm');
    const { queue, seen } = recordingQueue();
    const fanOut = startFanOut(t.store, queue, { readyLimit: 10_000, log });
    try {
      await waitUntil(() => seen.size === 357, 10_000);
    } finally {
      await fanOut.stop();
      await queue.close();
    }
    const { rows } = await t.db.query<{ undispatched: number; deliveries: number }>(
      `SELECT (SELECT count(*)::int FROM events WHERE account_id = $1 AND dispatched_at IS NULL) AS undispatched,
              (SELECT count(*)::int FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.account_id = $1) AS deliveries`,
      [accountId],
    );
    expect(rows[0]).toStrictEqual({ undispatched: 0, deliveries: 357 });
  });

  it('hands back every overdue delivery, far past one page, and none that waits for a later time', async () => {
    const accountId = 'outbox-relay';
    const hookId = await subscribedAccount(t.store, accountId);
    const insert = (count: number, relayAt: string) =>
      t.db.query<{ id: string }>(
        `WITH fired AS (
           INSERT INTO events (id, account_id, event_type, data, dispatched_at)
           SELECT gen_random_uuid(), $1, 'new_contact', '{}', now() FROM generate_series(1, $2) RETURNING id)
         INSERT INTO deliveries (id, event_id, hook_id, account_id, status, relay_at)
         SELECT gen_random_uuid(), fired.id, $3, $1, 'queued', ${relayAt} FROM fired RETURNING id::text`,
        [accountId, count, hookId],
      );
    const overdue = (await insert(1_103, "now() - interval '1 second'")).rows.map((row) => row.id);
    const later = (await insert(20, "now() + interval '1 hour'")).rows.map((row) => row.id);
    // One that waited for its place at the gate, and was left to the relay to hand back then.
    await t.store.deliveries.postpone([{ deliveryId: overdue[0]!, relayAt: Date.now() - 1_000, place: 1_234_567 }]);
    const { queue, seen, places } = recordingQueue();
    const relay = startOutboxRelay(t.store, queue, log, DAY);
    try {
      await waitUntil(() => overdue.every((id) => seen.has(id)), 10_000);
    } finally {
      await relay.stop();
      await queue.close();
    }
    expect(later.filter((id) => seen.has(id))).toStrictEqual([]);
    expect(places.get(overdue[0]!)).toBe(1_234_567); // it keeps its place in line
    expect(places.get(overdue[1]!)).toBeUndefined();
    // Taken for a while: another relay leaves them alone until they are overdue again.
    expect((await t.store.deliveries.takeOverdue(10, 5_000, 0)).filter((row) => overdue.includes(row.delivery_id))).toStrictEqual([]);
  });
  it('leaves deliveries past DELIVERY_MAX_WAIT to maintenance, which expires them, and reads only the days since', async () => {
    const accountId = 'outbox-too-old';
    const hookId = await subscribedAccount(t.store, accountId);
    const insert = async (queuedAgo: string) =>
      (
        await t.db.query<{ id: string }>(
          `WITH fired AS (
             INSERT INTO events (id, account_id, event_type, data, created_at, dispatched_at)
             VALUES (gen_random_uuid(), $1, 'new_contact', '{}', now() - interval '${queuedAgo}', now()) RETURNING id, created_at)
           INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
           SELECT gen_random_uuid(), fired.id, $2, $1, 'queued', fired.created_at, now() - interval '1 second' FROM fired RETURNING id::text`,
          [accountId, hookId],
        )
      ).rows[0]!.id;
    const tooOld = await insert('3 hours');
    const young = await insert('1 minute');
    const taken = await t.store.deliveries.takeOverdue(1_000, 5_000, Date.now() - 2 * 3_600_000);
    expect(taken.map((row) => row.delivery_id)).toContain(young);
    expect(taken.map((row) => row.delivery_id)).not.toContain(tooOld);

    const rule = { afterMs: DAY, minFailures: 1_000 };
    const { changed } = await runMaintenancePass(t.store, { retentionMs: 30 * DAY, stuckAfterMs: DAY, maxWaitMs: 2 * 3_600_000, disableRule: rule, pauseMs: 0 });
    expect(changed.expired).toBe(1);
    const { rows } = await t.db.query<{ id: string; status: string }>('SELECT id::text, status FROM deliveries WHERE id = ANY($1::uuid[])', [[tooOld, young]]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.status]))).toStrictEqual({ [tooOld]: 'expired', [young]: 'queued' });
  });
});
