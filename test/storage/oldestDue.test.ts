import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { storedHook } from '../support/app.js';
import { engines, useTestStore, newContactDeliveries } from '../support/databases.js';

const MINUTE = 60_000;

/**
 * The oldest due delivery (the gauge an operator's alert reads): how long the oldest queued
 * delivery whose relay time has passed has waited past it. Deliveries waiting for a later time,
 * and claimed ones, are not due.
 */
describe.each(engines())('the oldest due delivery on %s', (engine) => {
  const t = useTestStore(engine);

  it('is how long the oldest queued delivery has been past its time, 0 when none is', async () => {
    const accountId = 'oldest-due';
    await storedHook(t.store, accountId);
    expect(await t.store.deliveries.oldestDueSeconds()).toBe(0);

    const deliveries = await newContactDeliveries(t.store, accountId, ['+14153000001', '+14153000002', '+14153000003'], 10 * MINUTE);
    expect(deliveries).toHaveLength(3);
    const [late, later, waiting] = deliveries.map((delivery) => delivery.id);
    // Fanned out and still within their lease: the process that queued them is sending them.
    expect(await t.store.deliveries.oldestDueSeconds()).toBe(0);

    await t.store.deliveries.postpone([
      { deliveryId: late!, relayAt: Date.now() - 30 * MINUTE, place: 0 },
      { deliveryId: later!, relayAt: Date.now() - 5 * MINUTE, place: 0 },
      { deliveryId: waiting!, relayAt: Date.now() + 30 * MINUTE, place: 0 },
    ]);
    const oldest = await t.store.deliveries.oldestDueSeconds();
    expect(oldest).toBeGreaterThanOrEqual(30 * 60);
    expect(oldest).toBeLessThan(31 * 60);

    // Claimed, it is no longer waiting: the next oldest due one counts.
    expect(await t.store.deliveries.claim([late!], randomUUID())).toHaveLength(1);
    const next = await t.store.deliveries.oldestDueSeconds();
    expect(next).toBeGreaterThanOrEqual(5 * 60);
    expect(next).toBeLessThan(6 * 60);

    expect(await t.store.deliveries.claim([later!], randomUUID())).toHaveLength(1);
    expect(await t.store.deliveries.oldestDueSeconds()).toBe(0);
  });
});
