import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEmbeddedQueue } from '../../src/queue/embeddedQueue.js';
import { issueKey } from '../support/app.js';
import type { DeliveryJob, EventJob } from '../../src/workers/jobs.js';
import { startOutboxRelay, type RelayOptions } from '../../src/workers/outboxRelay.js';
import type { Store } from '../../src/storage/store.js';
import { engines, useTestStore } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';

const log = pino({ level: 'silent' });
const PAGE = 50;

/** A queue that only records the ids it is handed, and finishes each job at once without doing it. */
function recordingQueue<Data>(name: string, idOf: (data: Data) => string) {
  const seen = new Set<string>();
  const queue = createEmbeddedQueue<Data>(async (data) => void seen.add(idOf(data)), { capacity: 10_000, concurrency: 8, log, name });
  return { queue, seen };
}

/** Runs a relay over recording queues until `done` says it has restored what it should. */
async function relayUntil(store: Store, options: RelayOptions, done: (seen: { events: Set<string>; deliveries: Set<string> }) => boolean) {
  const events = recordingQueue<EventJob>('events', (data) => data.eventId);
  const deliveries = recordingQueue<DeliveryJob>('deliveries', (data) => data.deliveryId);
  const relay = startOutboxRelay(store, { events: events.queue, deliveries: deliveries.queue }, log, { ...options, pageSize: PAGE, graceMs: 0 });
  try {
    await waitUntil(() => done({ events: events.seen, deliveries: deliveries.seen }), 10_000);
  } finally {
    await relay.stop();
    await events.queue.close();
    await deliveries.queue.close();
  }
}

/**
 * The relay reaches every piece of pending work, however much there is: it pages through all
 * undispatched events and all queued deliveries on every pass, ties of timestamp included,
 * rather than re-reading the oldest page.
 */
describe.each(engines())('outbox relay on %s', (engine) => {
  const t = useTestStore(engine);

  it(`restores every undispatched event, far past one page of ${PAGE}, even when they share a timestamp`, async () => {
    const accountId = 'relay-events';
    const ids: string[] = [];
    for (let i = 0; i < 3 * PAGE + 7; i++) {
      const result = await t.store.contacts.upsert(accountId, { phone: `+1415300${String(i).padStart(4, '0')}`, fields: {} }, 'crm');
      ids.push(...result.eventIds);
    }
    await t.db.query(`UPDATE events SET created_at = now() - interval '1 minute' WHERE account_id = $1`, [accountId]);
    await relayUntil(t.store, { eventIntervalMs: 50 }, (seen) => ids.every((id) => seen.events.has(id)));
  });

  it(`restores every queued delivery whose job was lost, far past one page of ${PAGE}`, async () => {
    const accountId = 'relay-deliveries';
    const key = await issueKey(t.store, accountId, {});
    await t.store.hooks.create(
      { keyId: key.id, accountId },
      { eventType: 'new_contact', targetUrl: 'https://hooks.example.com/a', maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
      10,
    );
    const deliveryIds: string[] = [];
    for (let i = 0; i < 2 * PAGE + 3; i++) {
      const result = await t.store.contacts.upsert(accountId, { phone: `+1415400${String(i).padStart(4, '0')}`, fields: {} }, 'crm');
      for (const eventId of result.eventIds) deliveryIds.push(...(await t.store.events.dispatch(eventId)).map((d) => d.delivery_id));
    }
    expect(deliveryIds).toHaveLength(2 * PAGE + 3);
    await t.db.query(`UPDATE deliveries SET queued_at = now() - interval '1 minute' WHERE id = ANY($1::uuid[])`, [deliveryIds]);
    await relayUntil(t.store, { deliveryIntervalMs: 50 }, (seen) => deliveryIds.every((id) => seen.deliveries.has(id)));
  });
});
