import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../src/domain/delivery.js';
import type { EventType } from '../../src/domain/events.js';
import { newKey } from '../support/app.js';
import { engines, fanOutOutbox, recordEvents } from '../support/databases.js';
import { expectError, internalAuth, newAccount, snapshot, useTestApp } from '../support/http.js';

/** A rule that never disables: these tests look at the log and health, not at auto-disable. */
const NEVER = { afterMs: 86_400_000, minFailures: 1_000_000 };

interface LogEntry {
  id: string;
  hook_id: string;
  event_id: string;
  event: EventType;
  status: DeliveryStatus;
  queued_at: string;
}

describe.each(engines())('delivery log and hook health on %s', (engine) => {
  const t = useTestApp(engine);

  /** A key and a hook of a fresh account, and helpers that make deliveries to it the way the engine does. */
  async function subscribed(accountId = newAccount(), event: EventType = 'new_contact') {
    const key = await newKey(t.store, accountId);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/hooks', headers: key.auth, payload: { event, target_url: 'https://example.com/h' } });
    expect(created.statusCode).toBe(201);
    const hookId: string = created.json().id;
    return {
      key,
      accountId,
      hookId,
      /** `count` events fired and fanned out: one queued delivery each. Returns the delivery ids, oldest first. */
      async queue(count: number) {
        await recordEvents(t.db, accountId, count, { type: event });
        return (await fanOutOutbox(t.store, t.db)).map((delivery) => delivery.id);
      },
      /** Claims the deliveries and records these outcomes, as the engine's writes do. */
      async outcome(ids: string[], status: 'delivered' | 'failed' | 'refused', responseStatus?: number) {
        expect(await t.store.deliveries.claim(ids, randomUUID())).toHaveLength(ids.length);
        await t.store.deliveries.record(
          ids.map((deliveryId) => ({ deliveryId, status, responseStatus, durationMs: 3 })),
          NEVER,
        );
      },
      get: (query = '', auth = key.auth) => t.app.inject({ method: 'GET', url: `/api/v1/hooks/${hookId}/deliveries${query}`, headers: auth }),
      hook: (auth = key.auth) => t.app.inject({ method: 'GET', url: `/api/v1/hooks/${hookId}`, headers: auth }),
    };
  }

  const page = (response: { statusCode: number; json(): unknown }) => {
    expect(response.statusCode).toBe(200);
    return response.json() as { deliveries: LogEntry[]; next_cursor: string | null };
  };

  it('pages 130 deliveries in pages of 50, newest first, while more arrive: no row twice, none skipped', async () => {
    const h = await subscribed();
    const existing = await h.queue(130);
    const seen: LogEntry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const answer = page(await h.get(`?limit=50${cursor ? `&cursor=${cursor}` : ''}`));
      seen.push(...answer.deliveries);
      cursor = answer.next_cursor;
      pages++;
      // New deliveries arrive between the pages (and are newer than every row already seen).
      await h.queue(7);
    } while (cursor);
    const ids = seen.map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toStrictEqual(new Set(existing));
    expect(pages).toBe(3);
    const order = seen.map((row) => row.queued_at);
    expect(order).toStrictEqual([...order].sort().reverse());
  });

  it('answers 100 newest by default (as before paging), and next_cursor null on the last page', async () => {
    const h = await subscribed();
    await h.queue(101);
    const first = page(await h.get());
    expect(first.deliveries).toHaveLength(100);
    expect(first.next_cursor).not.toBeNull();
    const last = page(await h.get(`?cursor=${first.next_cursor}`));
    expect(last.deliveries).toHaveLength(1);
    expect(last.next_cursor).toBeNull();
  });

  it('filters by one status or several, by event_id, and by since and until', async () => {
    const h = await subscribed();
    const [a, b, c, d] = await h.queue(4);
    await h.outcome([a!], 'delivered', 200);
    await h.outcome([b!], 'failed', 500);
    await h.outcome([c!], 'refused');
    const statuses = async (query: string) => page(await h.get(query)).deliveries.map((row) => [row.id, row.status]);
    expect(await statuses('?status=failed')).toStrictEqual([[b, 'failed']]);
    expect(new Set(await statuses('?status=delivered,queued'))).toStrictEqual(
      new Set([
        [a, 'delivered'],
        [d, 'queued'],
      ]),
    );

    const all = page(await h.get()).deliveries;
    const ofC = all.find((row) => row.id === c)!;
    expect(page(await h.get(`?event_id=${ofC.event_id}`)).deliveries.map((row) => row.id)).toStrictEqual([c]);

    const times = all.map((row) => row.queued_at).sort();
    const middle = times[2]!;
    const since = page(await h.get(`?since=${encodeURIComponent(middle)}`)).deliveries;
    const until = page(await h.get(`?until=${encodeURIComponent(middle)}`)).deliveries;
    expect(since.every((row) => row.queued_at >= middle)).toBe(true);
    expect(until.every((row) => row.queued_at < middle)).toBe(true);
    expect(since.length + until.length).toBe(4);
    expect(page(await h.get('?since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00%2B02:00')).deliveries).toStrictEqual([]);
  });

  it.each([
    ['status', '?status=lost', 'invalid_status'],
    ['status list', '?status=failed,,delivered', 'invalid_status'],
    ['since', '?since=yesterday', 'invalid_time'],
    ['until without a zone', '?until=2026-11-23T12:00:00', 'invalid_time'],
    ['since out of range', '?since=2026-13-45T12:00:00Z', 'invalid_time'],
    ['limit 0', '?limit=0', 'invalid_limit'],
    ['limit 101', '?limit=101', 'invalid_limit'],
    ['limit 2.5', '?limit=2.5', 'invalid_limit'],
    ['cursor', '?cursor=not-a-cursor', 'invalid_cursor'],
    ['cursor of another shape', `?cursor=${Buffer.from('2026-11-23|x').toString('base64url')}`, 'invalid_cursor'],
    ['event_id', '?event_id=42', 'invalid_event_id'],
  ])('answers 400 for a bad %s, changing nothing', async (_what, query, code) => {
    const h = await subscribed();
    await h.queue(1);
    const before = await snapshot(t.db);
    expectError(await h.get(query), 400, code);
    expect(await snapshot(t.db)).toStrictEqual(before);
  });

  it('keeps health current as outcomes are recorded, and its counts match the log', async () => {
    const h = await subscribed();
    const ids = await h.queue(9);
    await h.outcome(ids.slice(0, 3), 'delivered', 204);
    await h.outcome(ids.slice(3, 5), 'failed', 429);
    await h.outcome(ids.slice(5, 6), 'refused');
    await t.store.deliveries.expire(ids.slice(6, 7));

    const hook = h.hook();
    const shown = (await hook).json();
    expect(shown).toMatchObject({ id: h.hookId, state: 'active', disabled_reason: null, disabled_at: null });
    const log = page(await h.get()).deliveries;
    const counted = (status: DeliveryStatus) => log.filter((row) => row.status === status).length;
    expect(shown.health.last_24h).toStrictEqual({
      delivered: counted('delivered'),
      failed: counted('failed'),
      refused: counted('refused'),
      expired: counted('expired'),
      unknown: counted('unknown'),
    });
    expect(shown.health.last_24h).toStrictEqual({ delivered: 3, failed: 2, refused: 1, expired: 1, unknown: 0 });
    // The 429s and the refusal after the successes: a streak of three, expiry not part of it.
    expect(shown.health.consecutive_failures).toBe(3);
    expect(shown.health.last_delivered_at).not.toBeNull();
    expect(shown.health.last_failed_at).not.toBeNull();
    expect(shown.health.skipped).toBe(0);

    // A success ends the streak.
    await h.outcome(ids.slice(7, 8), 'delivered', 200);
    expect((await h.hook()).json().health.consecutive_failures).toBe(0);

    // The list and the owner's list carry the same; the owner's also says which key made it.
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/hooks', headers: h.key.auth })).json().hooks;
    const owners = (await t.app.inject({ method: 'GET', url: `/internal/v1/accounts/${h.accountId}/hooks`, headers: internalAuth })).json().hooks;
    expect(listed).toStrictEqual([(await h.hook()).json()]);
    expect(owners).toStrictEqual(listed.map((hook: object) => ({ ...hook, key_id: h.key.id })));
  });

  it("answers 404 to another account's key, and to an unknown or malformed id, on every hook route", async () => {
    const h = await subscribed();
    const intruder = await newKey(t.store, newAccount());
    expectError(await h.hook(intruder.auth), 404, 'not_found');
    expectError(await h.get('', intruder.auth), 404, 'not_found');
    expectError(await t.app.inject({ method: 'POST', url: `/api/v1/hooks/${h.hookId}/enable`, headers: intruder.auth }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/hooks/${randomUUID()}`, headers: h.key.auth }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/hooks/nope', headers: h.key.auth }), 404, 'not_found');
    const other = newAccount();
    expectError(
      await t.app.inject({ method: 'POST', url: `/internal/v1/accounts/${other}/hooks/${h.hookId}/enable`, headers: internalAuth }),
      404,
      'not_found',
    );
  });

  describe('the account-wide log (first-party)', () => {
    const accountLog = (accountId: string, query = '') =>
      t.app.inject({ method: 'GET', url: `/internal/v1/accounts/${accountId}/deliveries${query}`, headers: internalAuth });

    it("holds every hook's deliveries of the account, newest first, filtered by hook_id and status, and pages", async () => {
      const h = await subscribed();
      const second = await subscribed(h.accountId);
      const elsewhere = await subscribed();
      // Each event goes to both hooks of the account.
      const ids = await h.queue(3);
      await elsewhere.queue(2);
      expect(ids).toHaveLength(6);
      const all = page(await accountLog(h.accountId)).deliveries;
      expect(new Set(all.map((row) => row.id))).toStrictEqual(new Set(ids));
      expect(new Set(all.map((row) => row.hook_id))).toStrictEqual(new Set([h.hookId, second.hookId]));

      const ofSecond = page(await accountLog(h.accountId, `?hook_id=${second.hookId}`)).deliveries;
      expect(ofSecond.map((row) => row.id)).toStrictEqual(all.filter((row) => row.hook_id === second.hookId).map((row) => row.id));
      expect(page(await accountLog(h.accountId, `?hook_id=${elsewhere.hookId}`)).deliveries).toStrictEqual([]);

      await h.outcome([ofSecond[0]!.id], 'failed', 503);
      expect(page(await accountLog(h.accountId, '?status=failed')).deliveries.map((row) => row.id)).toStrictEqual([ofSecond[0]!.id]);

      const first = page(await accountLog(h.accountId, '?limit=4'));
      const rest = page(await accountLog(h.accountId, `?limit=4&cursor=${first.next_cursor}`));
      expect([...first.deliveries, ...rest.deliveries].map((row) => row.id)).toStrictEqual(all.map((row) => row.id));
      expect(rest.next_cursor).toBeNull();
    });

    it('names each delivery by the type of the event it carries', async () => {
      const contacts = await subscribed();
      const calls = await subscribed(contacts.accountId, 'missed_call');
      const conversations = await subscribed(contacts.accountId, 'new_conversation');
      await contacts.queue(2);
      await calls.queue(3);
      await conversations.queue(1);
      const all = page(await accountLog(contacts.accountId)).deliveries;
      expect(all).toHaveLength(6);
      const { rows } = await t.db.query<{ id: string; event_type: EventType }>('SELECT id, event_type FROM events WHERE account_id = $1', [contacts.accountId]);
      const typeOf = new Map(rows.map((row) => [row.id, row.event_type]));
      expect(all.map((row) => row.event)).toStrictEqual(all.map((row) => typeOf.get(row.event_id)));
      expect(all.filter((row) => row.event === 'missed_call').map((row) => row.hook_id)).toStrictEqual([calls.hookId, calls.hookId, calls.hookId]);
      expect(page(await calls.get()).deliveries.map((row) => row.event)).toStrictEqual(['missed_call', 'missed_call', 'missed_call']);
    });

    it.each([
      ['hook_id', '?hook_id=nope', 'invalid_hook_id'],
      ['status', '?status=sent', 'invalid_status'],
      ['limit', '?limit=1000', 'invalid_limit'],
      ['until', '?until=tomorrow', 'invalid_time'],
      ['cursor', '?cursor=%2F%2F', 'invalid_cursor'],
    ])('answers 400 for a bad %s', async (_what, query, code) => {
      expectError(await accountLog(newAccount(), query), 400, code);
    });
  });
});
