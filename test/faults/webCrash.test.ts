import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from '../support/client.js';
import { engines } from '../support/databases.js';
import { sleep, startWeb, stopAllProcesses } from '../support/processes.js';
import { baseEnv, newPhone, serviceStore, type ServiceStore } from './support.js';

/**
 * SIGKILL of the web process in the middle of a stream of upserts. An upsert answered 200 was
 * committed before the answer, so after a restart it is in the database, exactly once, with its
 * one new_contact event. On PGlite the restart also takes over the lock the killed process left.
 */
describe.each(engines())('web process killed during upserts (%s)', (engine) => {
  const CLIENTS = 8;
  let store: ServiceStore | undefined;

  afterAll(async () => {
    await stopAllProcesses();
    await store?.cleanup();
  });

  it('keeps every upsert it answered 200, exactly once', async () => {
    store = await serviceStore(engine);
    const env = { ...baseEnv, ...store.env };
    const web = await startWeb(env);
    const key = await client(web.url).newKey('crash');

    const answered: string[] = [];
    const unexpected: string[] = [];
    let cut = 0;
    let killed = false;
    const stream = async () => {
      while (!killed) {
        const phone = newPhone();
        try {
          const response = await fetch(`${web.url}/api/v1/contacts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ phone, name: 'Crash Test' }),
          });
          if (response.status === 200) answered.push(phone);
          const body = await response.text();
          if (response.status !== 200 || JSON.parse(body).action !== 'inserted') unexpected.push(`${response.status} ${body}`);
        } catch {
          cut++; // the connection died with the process
          return;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, stream);
    await sleep(1000);
    expect(await web.stop('SIGKILL')).toBe('SIGKILL');
    killed = true;
    await Promise.all(clients);
    expect(unexpected).toStrictEqual([]);
    expect(answered.length).toBeGreaterThan(0);

    if (engine === 'pglite') {
      // The killed process could not remove its lock; the restart must take it over.
      const lock = JSON.parse(readFileSync(join(store.env.DATA_DIR!, 'contact-hooks.lock'), 'utf8'));
      expect(lock.pid).toBe(web.pid);
    }
    // The same store again: PGlite recovers its data directory and takes over the stale lock.
    const restarted = await startWeb(env);
    const again = await client(restarted.url).api(key)('POST', '/contacts', { phone: answered[0] });
    expect(again).toMatchObject({ status: 200, body: { action: 'updated' } });
    expect(await restarted.stop('SIGTERM')).toBe(0);

    const contacts = await store.query<{ phone: string; n: number }>(
      "SELECT phone, count(*)::int AS n FROM contacts WHERE account_id = 'crash' GROUP BY phone",
    );
    const events = await store.query<{ phone: string; n: number }>(
      `SELECT data->>'phone' AS phone, count(*)::int AS n FROM events
       WHERE account_id = 'crash' AND event_type = 'new_contact' GROUP BY 1`,
    );
    const rows = new Map(contacts.map((row) => [row.phone, row.n]));
    const fired = new Map(events.map((row) => [row.phone, row.n]));
    const foundOnce = answered.filter((phone) => rows.get(phone) === 1).length;
    const missing = answered.filter((phone) => !rows.has(phone));
    const duplicated = answered.filter((phone) => (rows.get(phone) ?? 0) > 1);
    const eventsOnce = answered.filter((phone) => fired.get(phone) === 1).length;
    const unanswered = contacts.length - new Set(answered).size;
    console.info(
      `[webCrash ${engine}] answered 200: ${answered.length}, found once: ${foundOnce}, missing: ${missing.length}, ` +
        `duplicated: ${duplicated.length}, new_contact events once: ${eventsOnce}, ` +
        `committed but unanswered (in flight at the kill): ${unanswered}, connections cut: ${cut}`,
    );
    expect(missing).toStrictEqual([]);
    expect(duplicated).toStrictEqual([]);
    expect(foundOnce).toBe(answered.length);
    expect(eventsOnce).toBe(answered.length);
  });
});
