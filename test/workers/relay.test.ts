import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DeliveryJobData } from '../../src/domain/delivery.js';
import type { FiredEvent } from '../../src/domain/events.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Store } from '../../src/storage/store.js';
import { runMaintenancePass } from '../../src/workers/maintenance.js';
import { startRelay } from '../../src/workers/relay.js';
import { collectingQueue, issueKey } from '../support/app.js';
import { engines, fanOutOutbox, recordEvents, useTestStore } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';

const log = pino({ level: 'silent' });
const DAY = 86_400_000;

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
 * The database is the record, the queues only carry work: the relay adds again every event of
 * the outbox past its relay time and every overdue queued delivery, page after page, and none
 * that is not due; a delivery keeps the place it waited for; a fan-out happens once however often
 * its job runs.
 */
describe.each(engines())('the relay and the fan-out on %s', (engine) => {
  const t = useTestStore(engine);

  /** The relay over queues that only keep what they are given, and what it counted per queue; stopped by `stop`. */
  const relayInto = () => {
    const events = collectingQueue<FiredEvent>();
    const deliveries = collectingQueue<DeliveryJobData>();
    const metrics = createMetrics();
    const relay = startRelay(t.store, { events: events.queue, deliveries: deliveries.queue }, log, DAY, metrics);
    const counted = async (queue: string) => (await metrics.relayed.get()).values.find((value) => value.labels.queue === queue)?.value;
    return { events: events.added, deliveries: deliveries.added, counted, stop: () => relay.stop() };
  };

  it('adds a job for every event left in the outbox past its relay time, far past one page, each once, and none for one not due', async () => {
    const accountId = 'relay-events';
    await subscribedAccount(t.store, accountId);
    // Recorded a minute ago, their jobs never added (Redis was away), and one just now.
    const overdue = await recordEvents(t.db, accountId, 1_103, { at: new Date(Date.now() - 60_000) });
    const [notDue] = await t.db
      .query<{ id: string }>(
        `WITH e AS (INSERT INTO events (id, account_id, event_type, data) VALUES (gen_random_uuid(), $1, 'new_contact', '{}') RETURNING id, account_id, event_type, created_at)
         INSERT INTO event_outbox SELECT id, account_id, event_type, created_at, created_at + interval '1 hour' FROM e RETURNING event_id::text AS id`,
        [accountId],
      )
      .then(({ rows }) => rows.map((row) => row.id));
    const relay = relayInto();
    try {
      await waitUntil(() => relay.events.length >= overdue.length, 15_000);
    } finally {
      await relay.stop();
    }
    expect(relay.events.map((event) => event.event_id).sort()).toStrictEqual([...overdue].sort());
    expect(relay.events.map((event) => event.event_id)).not.toContain(notDue);
    expect(await relay.counted('events')).toBe(overdue.length);
    expect(relay.events[0]).toStrictEqual({ event_id: expect.any(String), event: 'new_contact', account_id: accountId, fired_at: expect.stringMatching(/Z$/) });
    // Taken for a while: another relay leaves them alone until they are overdue again.
    expect(await t.store.events.takeOverdue(10, 5_000)).toStrictEqual([]);
  });

  it('adds nothing to a queue already holding 5,000 waiting jobs, and tops it up once it drains', async () => {
    const accountId = 'relay-top-up';
    await subscribedAccount(t.store, accountId);
    const overdue = await recordEvents(t.db, accountId, 20, { at: new Date(Date.now() - 60_000) });
    const added: FiredEvent[] = [];
    // Jobs waiting besides those the relay adds, which wait too until the test says they ran.
    let others = 5_000;
    let ran = 0;
    const full = {
      ...collectingQueue<FiredEvent>().queue,
      add: async (jobs: { data: FiredEvent }[]) => void added.push(...jobs.map((job) => job.data)),
      counts: async () => ({ waiting: others + added.length - ran, active: 0, delayed: 0, completed: 0, failed: 0 }),
    };
    const relay = startRelay(t.store, { events: full, deliveries: collectingQueue<DeliveryJobData>().queue }, log, DAY, createMetrics());
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(added).toStrictEqual([]);
      // Others' leftovers in this database are overdue too: the oldest, this test's, go first.
      others = 4_990;
      await waitUntil(() => added.length === 10, 5_000);
      expect(added.every((event) => overdue.includes(event.event_id))).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(added.length).toBe(10); // only what tops it up, while it stays that full
      ran = added.length;
      others = 0;
      await waitUntil(() => overdue.every((id) => added.some((event) => event.event_id === id)), 8_000);
    } finally {
      await relay.stop();
    }
  });

  it('fans an event out once however often its job runs: a second run gets the deliveries the first made, as they stand', async () => {
    const accountId = 'fan-out-once';
    const hookId = await subscribedAccount(t.store, accountId);
    const disabled = await subscribedAccount(t.store, accountId);
    await t.db.query(`UPDATE hooks SET state = 'disabled', created_at = now() - interval '1 hour' WHERE id = $1`, [disabled]);
    await t.db.query(`UPDATE hooks SET created_at = now() - interval '1 hour' WHERE id = $1`, [hookId]);
    const [eventId] = await recordEvents(t.db, accountId, 1);
    const [event] = await t.db
      .query<{ event_id: string; fired_at: string }>(
        `SELECT event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS fired_at FROM event_outbox WHERE event_id = $1`,
        [eventId],
      )
      .then(({ rows }) => rows);
    const first = await t.store.events.fanOut([event!], 60_000);
    expect(first.map(({ hookId: hook, status }) => ({ hook, status }))).toStrictEqual([{ hook: hookId, status: 'queued' }]);
    await t.store.deliveries.claim([first[0]!.id], '00000000-0000-4000-8000-000000000000');
    const again = await t.store.events.fanOut([event!], 60_000);
    expect(again.map(({ id, status }) => ({ id, status }))).toStrictEqual([{ id: first[0]!.id, status: 'sending' }]);
    // The disabled hook counted the event skipped once, not once per run.
    const { rows } = await t.db.query<{ skipped: number }>('SELECT skipped FROM hooks WHERE id = $1', [disabled]);
    expect(rows[0]!.skipped).toBe(1);
  });

  it('adds a job for every overdue delivery, far past one page, none for one that waits for a later time, and keeps each one’s place', async () => {
    const accountId = 'relay-deliveries';
    await subscribedAccount(t.store, accountId);
    await recordEvents(t.db, accountId, 1_123);
    const fanned = await fanOutOutbox(t.store, t.db, 0);
    const overdue = fanned.slice(0, 1_103).map((delivery) => delivery.id);
    const later = fanned.slice(1_103).map((delivery) => delivery.id);
    await t.store.deliveries.postpone(later.map((deliveryId) => ({ deliveryId, relayAt: Date.now() + 3_600_000, place: null })));
    // One that waited for its place at the gate, and was left to the relay to bring back then.
    await t.store.deliveries.postpone([{ deliveryId: overdue[0]!, relayAt: Date.now() - 1_000, place: 1_234_567 }]);
    const relay = relayInto();
    try {
      await waitUntil(() => relay.deliveries.length >= overdue.length, 15_000);
    } finally {
      await relay.stop();
    }
    expect(relay.deliveries.map((job) => job.delivery_id).sort()).toStrictEqual([...overdue].sort());
    expect(await relay.counted('deliveries')).toBe(overdue.length);
    // Ids only in the job; its handler reads the rest, with the place, from the row.
    expect(Object.keys(relay.deliveries[0]!).sort()).toStrictEqual(['account_id', 'delivery_id', 'due_at', 'event_id', 'hook_id']);
    expect((await t.store.deliveries.find([overdue[0]!]))[0]?.place).toBe(1_234_567);
    expect((await t.store.deliveries.find([overdue[1]!]))[0]?.place).toBeUndefined();
    expect((await t.store.deliveries.takeOverdue(10, 5_000, 0)).filter((delivery) => overdue.includes(delivery.id))).toStrictEqual([]);
  });

  it('leaves alone a delivery whose process renews its lease, never shortens a parking, and renews no claimed one', async () => {
    const accountId = 'relay-leases';
    await subscribedAccount(t.store, accountId);
    await recordEvents(t.db, accountId, 3);
    // Fanned out with no lease left: overdue unless renewed.
    const [held, parked, claimed] = (await fanOutOutbox(t.store, t.db, 0))
      .filter((delivery) => delivery.accountId === accountId)
      .map((delivery) => delivery.id);
    await t.store.deliveries.postpone([{ deliveryId: parked!, relayAt: Date.now() + 3_600_000, place: null }]);
    await t.store.urgentDeliveries.claim([claimed!], randomUUID());
    const before = await t.db.query<{ relay_at: Date }>('SELECT relay_at FROM deliveries WHERE id = $1', [claimed]);
    await t.store.deliveries.extendLeases([held!, parked!, claimed!], 5_000);
    const { rows } = await t.db.query<{ id: string; in_s: number; relay_at: Date }>(
      'SELECT id::text, extract(epoch FROM relay_at - clock_timestamp())::float8 AS in_s, relay_at FROM deliveries WHERE id = ANY($1::uuid[])',
      [[held, parked, claimed]],
    );
    const leftOf = Object.fromEntries(rows.map((row) => [row.id, row]));
    expect(leftOf[held!]!.in_s).toBeGreaterThan(4);
    expect(leftOf[held!]!.in_s).toBeLessThanOrEqual(5);
    expect(leftOf[parked!]!.in_s).toBeGreaterThan(3_500);
    expect(leftOf[claimed!]!.relay_at).toStrictEqual(before.rows[0]!.relay_at);
    expect((await t.store.deliveries.takeOverdue(1_000, 5_000, 0)).map((delivery) => delivery.id)).not.toContain(held);
  });

  it('leaves deliveries past DELIVERY_MAX_WAIT to maintenance, which expires them, and reads only the days since', async () => {
    const accountId = 'relay-too-old';
    const hookId = await subscribedAccount(t.store, accountId);
    const insert = async (queuedAgo: string) =>
      (
        await t.db.query<{ id: string }>(
          `WITH fired AS (
             INSERT INTO events (id, account_id, event_type, data, created_at)
             VALUES (gen_random_uuid(), $1, 'new_contact', '{}', now() - interval '${queuedAgo}') RETURNING id, created_at)
           INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, relay_at)
           SELECT gen_random_uuid(), fired.id, $2, $1, 'queued', fired.created_at, now() - interval '1 second' FROM fired RETURNING id::text`,
          [accountId, hookId],
        )
      ).rows[0]!.id;
    const tooOld = await insert('3 hours');
    const young = await insert('1 minute');
    const taken = await t.store.deliveries.takeOverdue(1_000, 5_000, Date.now() - 2 * 3_600_000);
    expect(taken.map((delivery) => delivery.id)).toContain(young);
    expect(taken.map((delivery) => delivery.id)).not.toContain(tooOld);

    const rule = { afterMs: DAY, minFailures: 1_000 };
    const { changed } = await runMaintenancePass(t.store, {
      retentionMs: 30 * DAY,
      stuckAfterMs: DAY,
      maxWaitMs: 2 * 3_600_000,
      disableRule: rule,
      pauseMs: 0,
    });
    expect(changed.expired).toBe(1);
    const { rows } = await t.db.query<{ id: string; status: string }>('SELECT id::text, status FROM deliveries WHERE id = ANY($1::uuid[])', [[tooOld, young]]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.status]))).toStrictEqual({ [tooOld]: 'expired', [young]: 'queued' });
  });
});
