import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { queuedAtOfId } from '../../src/storage/deliveryIds.js';
import { DAYS_AHEAD } from '../../src/storage/partitions.js';
import { storedHook } from '../support/app.js';
import { engines, fanOutOutbox, recordEvents, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const DAY = 86_400_000;
const rule = { afterMs: DAY, minFailures: 1_000_000 };

/**
 * Deliveries and events are partitioned by UTC day; retention drops whole days. Over the real
 * store on each engine: days are placed in the future, where the partitions made ahead are.
 */
describe.each(engines())('day partitions on %s', (engine) => {
  const t = useTestStore(engine);

  const today = () => t.store.partitions.now().then((now) => Math.floor(now / DAY) * DAY);
  const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

  /** An event of a new_contact hook of a new account, fired at `at`, fanned out: its delivery. */
  async function deliveryAt(at: number) {
    const accountId = newAccount();
    const { hookId } = await storedHook(t.store, accountId);
    await t.db.query(`UPDATE hooks SET created_at = '-infinity' WHERE id = $1`, [hookId]);
    const [eventId] = await recordEvents(t.db, accountId, 1, { at: new Date(at) });
    const deliveryId = (await fanOutOutbox(t.store, t.db)).find((delivery) => delivery.accountId === accountId)?.id;
    if (!deliveryId || !eventId) throw new Error('no delivery');
    return { deliveryId, eventId, hookId };
  }
  async function deliver(deliveryId: string) {
    expect(await t.store.deliveries.claim([deliveryId], randomUUID())).toHaveLength(1);
    await t.store.deliveries.record([{ deliveryId, status: 'delivered', responseStatus: 200, durationMs: 3 }], rule);
  }
  const partitionOf = async (table: 'deliveries' | 'events', id: string) =>
    (await t.db.query<{ name: string }>(`SELECT tableoid::regclass::text AS name FROM ${table} WHERE id = $1`, [id])).rows[0]?.name;
  const names = async () => {
    const { deliveries, events } = await t.store.partitions.list();
    return { deliveries: deliveries.map((p) => p.name), events: events.map((p) => p.name) };
  };

  it(`keeps a partition for each of the next ${DAYS_AHEAD} days, and making them again makes none`, async () => {
    const day0 = await today();
    const { deliveries, events } = await names();
    for (let i = 1; i <= DAYS_AHEAD; i++) {
      expect(deliveries).toContain(`deliveries_${dayName(day0 + i * DAY)}`);
      expect(events).toContain(`events_${dayName(day0 + i * DAY)}`);
    }
    expect(await t.store.partitions.ensure()).toStrictEqual([]);
  });

  it("puts a delivery and its event in their day's partitions, with the time in the delivery's id, and sends it from there", async () => {
    const at = (await today()) + 2 * DAY + 12 * 3_600_000 + 345.678;
    const { deliveryId, eventId } = await deliveryAt(at);
    expect(await partitionOf('deliveries', deliveryId)).toBe(`deliveries_${dayName(at)}`);
    expect(await partitionOf('events', eventId)).toBe(`events_${dayName(at)}`);
    expect(queuedAtOfId(deliveryId)).toBe(Math.floor(at));
    await deliver(deliveryId);
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM deliveries WHERE id = $1', [deliveryId]);
    expect(rows[0]?.status).toBe('delivered');
  });

  it('drops exactly the days whose rows are all past the cutoff, and none the engine still needs', async () => {
    const day0 = await today();
    const delivered = await deliveryAt(day0 + 3 * DAY + 1_000);
    await deliver(delivered.deliveryId);
    const queued = await deliveryAt(day0 + 4 * DAY + 1_000);
    const later = await deliveryAt(day0 + 6 * DAY + 1_000);
    await deliver(later.deliveryId);
    // Last, so no fan-out above takes it.
    const [undispatched = ''] = await recordEvents(t.db, 'nobody', 1, { at: new Date(day0 + 5 * DAY + 1_000) });

    // Every day before day 6 is past the cutoff; day 6 only partly, so it stays. Today is in the
    // first partition, of everything before tomorrow.
    const dropped = await t.store.partitions.dropBefore(day0 + 6 * DAY + 3_600_000);
    const days = (...offsets: number[]) => offsets.flatMap((i) => [`deliveries_${dayName(day0 + i * DAY)}`, `events_${dayName(day0 + i * DAY)}`]);
    expect(dropped).toStrictEqual([`deliveries_until_${dayName(day0 + DAY)}`, `events_until_${dayName(day0 + DAY)}`, ...days(1, 2, 3)]);
    const left = await names();
    for (const i of [4, 5, 6, 7]) expect(left.deliveries).toContain(`deliveries_${dayName(day0 + i * DAY)}`);
    expect(await partitionOf('deliveries', delivered.deliveryId)).toBeUndefined();
    expect(await partitionOf('events', delivered.eventId)).toBeUndefined();
    expect(await partitionOf('deliveries', queued.deliveryId)).toBe(`deliveries_${dayName(day0 + 4 * DAY)}`);
    expect(await partitionOf('events', undispatched)).toBe(`events_${dayName(day0 + 5 * DAY)}`);

    // Once the engine is done with them, their days go too.
    await deliver(queued.deliveryId);
    await fanOutOutbox(t.store, t.db);
    expect(await t.store.partitions.dropBefore(day0 + 6 * DAY)).toStrictEqual(days(4, 5));
    expect(await partitionOf('deliveries', later.deliveryId)).toBe(`deliveries_${dayName(day0 + 6 * DAY)}`);
  });
  it('drops a day a stopped process detached but did not drop', async () => {
    const day6 = (await today()) + 6 * DAY;
    await t.db.exec(`ALTER TABLE deliveries DETACH PARTITION deliveries_${dayName(day6)}; ALTER TABLE events DETACH PARTITION events_${dayName(day6)}`);
    const tables = async () =>
      (
        await t.db.query<{ name: string }>(`SELECT relname AS name FROM pg_class WHERE relname IN ($1, $2)`, [
          `deliveries_${dayName(day6)}`,
          `events_${dayName(day6)}`,
        ])
      ).rows;
    expect(await tables()).toHaveLength(2);
    expect(await t.store.partitions.dropBefore(0)).toStrictEqual([]);
    expect(await tables()).toStrictEqual([]);
  });
});
