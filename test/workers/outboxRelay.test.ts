import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLocalQueue } from '../../src/queue/localQueue.js';
import type { Store } from '../../src/storage/store.js';
import { startFanOut } from '../../src/workers/fanOut.js';
import type { DeliveryJob } from '../../src/workers/jobs.js';
import { runMaintenancePass } from '../../src/workers/maintenance.js';
import { startOutboxRelay } from '../../src/workers/outboxRelay.js';
import { issueKey } from '../support/app.js';
import { engines, useTestStore } from '../support/databases.js';
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
    // Left in the outbox, as an older web process leaves its events (it rings instead of fanning out).
    await t.db.query(`INSERT INTO events (id, account_id, event_type, data) SELECT gen_random_uuid(), $1, 'new_contact', '{}' FROM generate_series(1, 357)`, [accountId]);
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

  /** A subscription made an hour ago: events fired since go to it. */
  const subscribedAnHourAgo = async (accountId: string) => {
    await subscribedAccount(t.store, accountId);
    await t.db.query(`UPDATE hooks SET created_at = now() - interval '1 hour' WHERE account_id = $1`, [accountId]);
  };
  /** An event of `accountId` that fired `ago` (an interval) before now, committed only now. */
  const firedAgo = async (accountId: string, ago: string) =>
    (await t.db.query<{ id: string }>(`INSERT INTO events (id, account_id, event_type, data, created_at) VALUES (gen_random_uuid(), $1, 'new_contact', '{}', now() - interval '${ago}') RETURNING id::text`, [accountId]))
      .rows[0]!.id;

  it('takes, looking back, only the events fired that recently; looking at the whole outbox, the rest', async () => {
    const accountId = 'outbox-look-back';
    await subscribedAnHourAgo(accountId);
    const straggler = await firedAgo(accountId, '1 minute');
    const recent = await firedAgo(accountId, '1 second');
    const eventsOf = (taken: { deliveries: { delivery_id: string }[] }) =>
      t.db.query<{ id: string }>('SELECT event_id::text AS id FROM deliveries WHERE id = ANY($1::uuid[])', [taken.deliveries.map((row) => row.delivery_id)]).then(({ rows }) => rows.map((row) => row.id));

    const lookingBack = await t.store.events.fanOut(100, 60_000, 10_000);
    expect(await eventsOf(lookingBack)).toStrictEqual([recent]);
    const whole = await t.store.events.fanOut(100, 60_000);
    expect(await eventsOf(whole)).toStrictEqual([straggler]);
  });

  it("fans out an event committed long after it fired, which a ring's look does not reach, by the next whole look", async () => {
    const accountId = 'outbox-straggler';
    await subscribedAnHourAgo(accountId);
    const { queue, seen } = recordingQueue();
    const fanOut = startFanOut(t.store, queue, { readyLimit: 10_000, log });
    const deliveryOf = async (eventId: string) =>
      (await t.db.query<{ id: string }>('SELECT id::text FROM deliveries WHERE event_id = $1', [eventId])).rows.map((row) => row.id);
    try {
      // Caught up: the first whole look found the outbox empty; rings look back from then on.
      await firedAgo(accountId, '0 seconds');
      fanOut.wake();
      await waitUntil(() => seen.size === 1, 5_000);
      const straggler = await firedAgo(accountId, '1 minute');
      const recent = await firedAgo(accountId, '1 second');
      fanOut.wake();
      await waitUntil(async () => (await deliveryOf(recent)).length === 1 && (await deliveryOf(straggler)).length === 1, 5_000);
      await waitUntil(async () => [...(await deliveryOf(recent)), ...(await deliveryOf(straggler))].every((id) => seen.has(id)), 5_000);
    } finally {
      await fanOut.stop();
      await queue.close();
    }
    expect(seen.size).toBe(3);
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
