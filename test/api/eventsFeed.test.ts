import { describe, expect, it } from 'vitest';
import { newKey, testServices } from '../support/app.js';
import { engines } from '../support/databases.js';
import { expectError, newAccount, useTestApp } from '../support/http.js';

interface FeedEvent {
  id: string;
  event: string;
  data: { contact_id?: string; phone?: string };
  created_at: string;
}
interface Feed {
  events: FeedEvent[];
  next_cursor: string;
}

describe.each(engines())('the events feed on %s', (engine) => {
  const t = useTestApp(engine);
  let phone = 4_155_600_000;

  async function account() {
    const accountId = newAccount();
    const key = await newKey(t.store, accountId);
    const feed = async (query: string) => {
      const response = await t.app.inject({ method: 'GET', url: `/api/v1/events?${query}`, headers: key.auth });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<Feed>();
    };
    /** A new contact: one new_contact event; returns the contact's id. */
    const fire = async () => {
      const response = await t.app.inject({ method: 'POST', url: '/api/v1/contacts', headers: key.auth, payload: { phone: `+1${phone++}` } });
      expect(response.json<{ action: string }>().action).toBe('inserted');
      return response.json<{ contact_id: string }>().contact_id;
    };
    return { accountId, key, feed, fire };
  }

  it('pages over 250 events oldest first, each exactly once, while new events arrive', async () => {
    const a = await account();
    const start = await a.feed('event=new_contact');
    expect(start.events).toStrictEqual([]);
    const fired: string[] = [];
    for (let i = 0; i < 250; i++) fired.push(await a.fire());

    const read: FeedEvent[] = [];
    let cursor = start.next_cursor;
    for (;;) {
      // Five more events fire while each page is read.
      const [page] = await Promise.all([
        a.feed(`event=new_contact&limit=40&after=${cursor}`),
        (async () => {
          if (fired.length < 300) for (let i = 0; i < 5; i++) fired.push(await a.fire());
        })(),
      ]);
      read.push(...page.events);
      cursor = page.next_cursor;
      if (page.events.length === 0 && fired.length >= 300) break;
    }
    expect(read.map((event) => event.data.contact_id)).toStrictEqual(fired);
    expect(new Set(read.map((event) => event.id)).size).toBe(300);
    expect(read.every((event) => event.event === 'new_contact')).toBe(true);
    // Nothing new: the cursor stays where it is, and answers nothing again.
    expect((await a.feed(`event=new_contact&after=${cursor}`)).events).toStrictEqual([]);
  });

  it('without a cursor answers the newest events, newest first, and a cursor after them', async () => {
    const a = await account();
    const fired = [await a.fire(), await a.fire(), await a.fire(), await a.fire()];
    const samples = await a.feed('event=new_contact');
    expect(samples.events.map((event) => event.data.contact_id)).toStrictEqual(fired.slice(1).reverse());
    expect((await a.feed('event=new_contact&limit=10')).events).toHaveLength(4);
    expect((await a.feed(`event=new_contact&after=${samples.next_cursor}`)).events).toStrictEqual([]);
    const later = await a.fire();
    expect((await a.feed(`event=new_contact&after=${samples.next_cursor}`)).events.map((event) => event.data.contact_id)).toStrictEqual([later]);
  });

  it('carries each event’s data exactly as its POSTs do, and leaves test events out', async () => {
    const a = await account();
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/v1/hooks',
      headers: a.key.auth,
      payload: { event: 'new_contact', target_url: 'https://hooks.example.com/feed' },
    });
    const start = await a.feed('event=new_contact');
    await testServices(t.store).hooks.sendTest(a.accountId, hook.json<{ id: string }>().id);
    const contactId = await a.fire();
    const { rows } = await t.db.query<{ data: unknown }>(`SELECT data FROM events WHERE account_id = $1 AND hook_id IS NULL`, [a.accountId]);
    const page = await a.feed(`event=new_contact&after=${start.next_cursor}`);
    expect(page.events.map((event) => event.data.contact_id)).toStrictEqual([contactId]);
    expect(page.events.map((event) => event.data)).toStrictEqual(rows.map((row) => row.data));
  });

  it('reveals nothing of another account through its cursor, and pages only by type', async () => {
    const a = await account();
    const b = await account();
    const start = await a.feed('event=new_contact');
    await a.fire();
    await a.fire();
    const page = await b.feed(`event=new_contact&after=${start.next_cursor}`);
    expect(page.events).toStrictEqual([]);
    expect((await a.feed(`event=missed_call&after=${start.next_cursor}`)).events).toStrictEqual([]);
    expect((await a.feed(`event=new_contact&after=${start.next_cursor}`)).events).toHaveLength(2);
  });

  it('answers 400 for a bad cursor, limit or type, and 410 for a cursor older than retention', async () => {
    const a = await account();
    const { next_cursor: cursor } = await a.feed('event=new_contact');
    const get = (query: string) => t.app.inject({ method: 'GET', url: `/api/v1/events?${query}`, headers: a.key.auth });
    const encode = (text: string) => Buffer.from(text).toString('base64url');
    const [tx, id, at] = Buffer.from(cursor, 'base64url').toString().split('|');
    for (const bad of [
      'garbage!',
      'x',
      encode('not|a|cursor'),
      encode(`${tx}|${id}`),
      encode(`${tx}|not-a-uuid|${at}`),
      encode(`-1|${id}|${at}`),
      encode(`18446744073709551616|${id}|${at}`),
      encode(`${tx}|${id}|${at}|extra`),
    ]) {
      expectError(await get(`event=new_contact&after=${encodeURIComponent(bad)}`), 400, 'invalid_cursor');
    }
    for (const limit of ['0', '101', 'ten', '1.5', '-1']) expectError(await get(`event=new_contact&limit=${limit}`), 400, 'invalid_limit');
    expectError(await get('event=bogus'), 400, 'invalid_event');
    expectError(await get('limit=3'), 400, 'invalid_event');
    const longAgo = Date.now() - 31 * 86_400_000; // retention keeps 30 days by default
    expectError(await get(`event=new_contact&after=${encode(`${tx}|${id}|${longAgo}`)}`), 410, 'cursor_expired');
  });

  // PGlite runs one transaction at a time: only a server has one open beside another.
  if (engine === 'postgres')
    it('never moves a cursor past an event whose transaction is still open', async () => {
      const a = await account();
      const start = await a.feed('event=new_contact');
      let release!: () => void;
      let inserted!: () => void;
      const insertedEarlier = new Promise<void>((resolve) => (inserted = resolve));
      // An event whose transaction began first and commits last, as a slow group commit would.
      const slow = t.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO events (id, account_id, event_type, data) VALUES (gen_random_uuid(), $1, 'new_contact', '{"slow": true}')`, [a.accountId]);
        inserted();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await insertedEarlier;
      const quick = await a.fire();
      const whileOpen = await a.feed(`event=new_contact&after=${start.next_cursor}`);
      expect(whileOpen.events).toStrictEqual([]);
      release();
      await slow;
      const after = await a.feed(`event=new_contact&after=${whileOpen.next_cursor}`);
      expect(after.events.map((event) => (event.data as Record<string, unknown>).slow ?? event.data.contact_id)).toStrictEqual([true, quick]);
    });
});
