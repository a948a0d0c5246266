import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../src/domain/delivery.js';
import type { Database } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { maintenanceSettings, runMaintenancePass } from '../../src/workers/maintenance.js';
import { buildTestApp, newKey, testConfig } from '../support/app.js';
import { engines, openTestStore, upsertContact } from '../support/databases.js';
import { internalAuth, newAccount } from '../support/http.js';

const HOUR = 3_600_000;
const OLD = 2 * HOUR; // past the retention used below
const RECENT = 60_000;
const RETENTION_MS = HOUR;

/**
 * Retention and stuck claims over the real store, on each engine: rows are aged by writing their
 * timestamps, then one maintenance pass runs, with batches of two so every kind takes several.
 */
describe.each(engines())('maintenance on %s', (engine) => {
  let store: Store;
  let db: Database;
  let app: FastifyInstance;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, db, cleanup } = await openTestStore(engine));
    ({ app } = await buildTestApp(store));
  });
  afterAll(async () => {
    await app?.close();
    await cleanup?.();
  });

  const ago = (ms: number) => new Date(Date.now() - ms);
  const ids = async (table: string) => new Set((await db.query<{ id: string }>(`SELECT id::text FROM ${table}`)).rows.map((row) => row.id));

  async function hook(keyId: string, accountId: string, deletedAgo?: number) {
    const created = await store.hooks.create(
      { keyId, accountId },
      { eventType: 'new_contact', targetUrl: 'https://example.com/h', maxPerSecond: null, secret: 'whsec_x' },
      100,
    );
    if (created.outcome !== 'created') throw new Error(created.outcome);
    if (deletedAgo !== undefined) await db.query(`UPDATE hooks SET deleted_at = $2, secret = '' WHERE id = $1`, [created.hook.id, ago(deletedAgo)]);
    return created.hook.id;
  }
  /** An event fired `createdAgo`; fanned out, or still in the outbox. */
  async function event(accountId: string, createdAgo: number, fannedOut: boolean) {
    const id = randomUUID();
    await db.query(`INSERT INTO events (id, account_id, event_type, data, created_at) VALUES ($1, $2, 'new_contact', '{}', $3)`, [
      id,
      accountId,
      ago(createdAgo),
    ]);
    if (!fannedOut) await db.query(`INSERT INTO event_outbox SELECT id, account_id, event_type, created_at, created_at FROM events WHERE id = $1`, [id]);
    return id;
  }
  async function delivery(eventId: string, hookId: string, status: DeliveryStatus, queuedAgo: number, attemptedAgo?: number) {
    const id = randomUUID();
    await db.query(
      `INSERT INTO deliveries (id, event_id, hook_id, account_id, status, queued_at, attempted_at)
       SELECT $1, $2, $3, account_id, $4, $5, $6 FROM hooks WHERE id = $3`,
      [id, eventId, hookId, status, ago(queuedAgo), attemptedAgo === undefined ? null : ago(attemptedAgo)],
    );
    return id;
  }
  async function call(accountId: string, createdAgo: number) {
    const id = randomUUID();
    await db.query(
      `INSERT INTO calls (account_id, conversation_id, channel, outcome, spam, caller_name, caller_number, summary, created_at)
       VALUES ($1, $2, 'voice', 'answered', false, 'Ann', '+14155550100', 'personal', $3)`,
      [accountId, id, ago(createdAgo)],
    );
    return id;
  }
  const disableRule = { afterMs: HOUR, minFailures: 1_000 };
  // No table is ever due a VACUUM here. Whether one is depends on the dead rows PGlite's
  // statistics hold at that moment, which this test does not control; vacuum.test.ts is where
  // that step is tested.
  const vacuum = { deadRows: 1e12, deadFraction: 1, freezeAge: 2 ** 31 - 1 };
  const pass = async () =>
    (await runMaintenancePass(store, { retentionMs: RETENTION_MS, stuckAfterMs: HOUR, maxWaitMs: 1_000 * HOUR, disableRule, batch: 2, pauseMs: 0, vacuum }))
      .changed;

  it('prunes what is past RETENTION_DAYS and nothing that is still needed', async () => {
    const accountId = newAccount();
    const live = await newKey(store, accountId);
    const revokedLong = await newKey(store, accountId);
    const revokedRecently = await newKey(store, accountId);
    const liveHook = await hook(live.id, accountId);
    const deletedWithOldLog = await hook(live.id, accountId, OLD);
    const deletedWithRecentLog = await hook(live.id, accountId, OLD);
    const deletedJustNow = await hook(live.id, accountId, 10_000);
    await hook(revokedLong.id, accountId, OLD); // deleted with its key: goes, and then the key
    await db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revokedLong.id, ago(OLD)]);
    await db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revokedRecently.id, ago(RECENT)]);

    const oldDone = await event(accountId, OLD, true);
    await delivery(oldDone, liveHook, 'delivered', OLD, OLD);
    await delivery(oldDone, deletedWithOldLog, 'failed', OLD, OLD);
    await delivery(oldDone, deletedJustNow, 'unknown', OLD, OLD);
    const oldQueuedEvent = await event(accountId, OLD, true);
    const stillQueued = await delivery(oldQueuedEvent, liveHook, 'queued', OLD);
    const oldSendingEvent = await event(accountId, OLD, true);
    const stillSending = await delivery(oldSendingEvent, liveHook, 'sending', OLD, RECENT);
    const undispatched = await event(accountId, OLD, false);
    const recentEvent = await event(accountId, RECENT, true);
    await event(accountId, OLD, true); // fanned out to no one
    const oldWithRecentDelivery = await event(accountId, OLD, true);
    const recentDelivery = await delivery(oldWithRecentDelivery, deletedWithRecentLog, 'expired', RECENT);
    const oldCalls = await Promise.all([1, 2, 3, 4, 5].map(() => call(accountId, OLD)));
    const recentCall = await call(accountId, RECENT);
    const contact = await upsertContact(store, accountId, { phone: '+14155550100', fields: { name: 'Kept' } }, 'api');
    await db.query('UPDATE contacts SET created_at = $2, updated_at = $2 WHERE id = $1', [contact.contactId, ago(1000 * HOUR)]);
    // Its new_contact event, just fired, in the outbox until a worker's job fans it out.
    const contactEvent = (await db.query<{ id: string }>(`SELECT id::text FROM events WHERE data->>'contact_id' = $1`, [contact.contactId])).rows[0]!.id;

    const changed = await pass();

    expect(await ids('deliveries')).toStrictEqual(new Set([stillQueued, stillSending, recentDelivery]));
    expect(await ids('events')).toStrictEqual(new Set([oldQueuedEvent, oldSendingEvent, undispatched, recentEvent, oldWithRecentDelivery, contactEvent]));
    expect(await ids('hooks')).toStrictEqual(new Set([liveHook, deletedWithRecentLog, deletedJustNow]));
    expect(await ids('api_keys')).toStrictEqual(new Set([live.id, revokedRecently.id]));
    expect(new Set((await db.query<{ id: string }>('SELECT conversation_id::text AS id FROM calls')).rows.map((row) => row.id))).toStrictEqual(
      new Set([recentCall]),
    );
    expect(await ids('contacts')).toStrictEqual(new Set([contact.contactId]));
    expect(changed).toStrictEqual({
      unknown: 0,
      expired: 0,
      partitionsCreated: 0,
      partitionsDropped: 0,
      deliveries: 3,
      events: 2,
      calls: oldCalls.length,
      hooks: 2,
      keys: 1,
      outcomeHours: 0,
      portalSessions: 0,
      vacuumed: 0,
    });

    // A second pass finds nothing more to do.
    expect(Object.values(await pass()).every((count) => count === 0)).toBe(true);
  });

  it('turns a claim still sending past the delivery timeout and grace into unknown, never to be claimed or sent again', async () => {
    const accountId = newAccount();
    const key = await newKey(store, accountId);
    const hookId = await hook(key.id, accountId);
    const eventId = await event(accountId, 5 * 60_000, true);
    const settings = maintenanceSettings(testConfig({ DELIVERY_TIMEOUT_MS: '1000' }));
    expect(settings.stuckAfterMs).toBe(61_000);
    const stuck = await delivery(eventId, hookId, 'sending', 3 * 60_000, 2 * 60_000);
    const inFlight = await delivery(await event(accountId, 60_000, true), hookId, 'sending', 30_000, 30_000);
    const waiting = await delivery(await event(accountId, 5 * 60_000, true), hookId, 'queued', 3 * 60_000);

    expect((await runMaintenancePass(store, { ...settings, batch: 2, pauseMs: 0 })).changed.unknown).toBe(1);
    const statuses = await db.query<{ id: string; status: string }>('SELECT id::text, status FROM deliveries WHERE id = ANY($1::uuid[])', [
      [stuck, inFlight, waiting],
    ]);
    expect(Object.fromEntries(statuses.rows.map((row) => [row.id, row.status]))).toStrictEqual({
      [stuck]: 'unknown',
      [inFlight]: 'sending',
      [waiting]: 'queued',
    });

    // Never retried: it cannot be claimed again, and a late outcome does not rewrite it.
    expect(await store.deliveries.claim([stuck], randomUUID())).toStrictEqual([]);
    await store.deliveries.record([{ deliveryId: stuck, status: 'delivered', responseStatus: 200, durationMs: 5 }], settings.disableRule);
    const log = await app.inject({ method: 'GET', url: `/api/v1/hooks/${hookId}/deliveries`, headers: key.auth });
    expect(log.json().deliveries.find((row: { event_id: string }) => row.event_id === eventId)).toMatchObject({ status: 'unknown', response_status: null });
  });

  it('blanks the signing secret of a subscription when it is deleted: unsubscribed, gone (410) or revoked', async () => {
    const accountId = newAccount();
    const key = await newKey(store, accountId);
    const subscribe = async () =>
      (
        await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: key.auth, payload: { event: 'new_contact', target_url: 'https://example.com/h' } })
      ).json().id as string;
    const [unsubscribed, gone, revoked] = [await subscribe(), await subscribe(), await subscribe()];
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/hooks/${unsubscribed}`, headers: key.auth })).statusCode).toBe(200);
    await store.hooks.deleteGone(gone);
    expect((await app.inject({ method: 'DELETE', url: `/internal/v1/keys/${key.id}`, headers: internalAuth })).statusCode).toBe(200);
    const { rows } = await db.query<{ id: string; secret: string }>('SELECT id::text, secret FROM hooks WHERE api_key_id = $1', [key.id]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.secret]))).toStrictEqual({ [unsubscribed]: '', [gone]: '', [revoked]: '' });
  });
});
