import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { startMaintenance } from '../../src/workers/maintenance.js';
import { storedHook } from '../support/app.js';
import { engines, useTestStore, newContactDeliveries } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';

const unknownCount = async (metrics: ReturnType<typeof createMetrics>) =>
  (await metrics.registry.getSingleMetric('webhook_deliveries_total')!.get()).values.find((value) => value.labels.outcome === 'unknown')?.value;

/**
 * Deliveries ending `unknown` are counted where they are declared so, in maintenance: the
 * operators' alert ContactHooksDeliveriesUnknown reads this count.
 */
describe.each(engines())('maintenance on %s', (engine) => {
  const t = useTestStore(engine);

  it('counts each stuck claim it declares unknown as a delivery ending unknown', async () => {
    const accountId = 'maintenance-metrics';
    await storedHook(t.store, accountId);
    const deliveries = await newContactDeliveries(t.store, accountId, ['+14153100001', '+14153100002', '+14153100003']);
    const [stuck, alsoStuck, inFlight] = deliveries.map((delivery) => delivery.id);
    for (const id of [stuck, alsoStuck, inFlight]) expect(await t.store.deliveries.claim([id!], randomUUID())).toHaveLength(1);
    // Two claims made long ago (their workers died mid-POST), one just now.
    await t.db.query(`UPDATE deliveries SET attempted_at = now() - interval '10 minutes' WHERE id = ANY($1::uuid[])`, [[stuck, alsoStuck]]);

    const metrics = createMetrics();
    expect(await unknownCount(metrics)).toBe(0);
    // A 10 s retention makes a pass a second; it never prunes a claim still sending.
    const maintenance = startMaintenance(
      t.store,
      pino({ level: 'silent' }),
      { retentionMs: 10_000, stuckAfterMs: 5 * 60_000, maxWaitMs: 86_400_000, disableRule: { afterMs: 86_400_000, minFailures: 20 }, pauseMs: 0 },
      metrics,
    );
    try {
      await waitUntil(async () => (await unknownCount(metrics)) === 2, 15_000);
    } finally {
      await maintenance.stop();
    }
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM deliveries WHERE id = $1', [inFlight]);
    expect(rows[0]?.status).toBe('sending');
  });
});
