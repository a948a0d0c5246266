import { afterAll, describe, expect, it } from 'vitest';
import { client } from '../support/client.js';
import { engines } from '../support/databases.js';
import { sleep, startWeb, stopAllProcesses } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { baseEnv, countBy, newPhone, serviceStore, type ServiceStore } from './support.js';

/**
 * 200 upserts of one new phone at the same moment, through a real server process: they meet on
 * the unique (account, phone), so one inserts and fires new_contact, and 199 update.
 */
describe.each(engines())('200 concurrent upserts of one new phone (%s)', (engine) => {
  const RACERS = 200;
  let store: ServiceStore | undefined;
  let receiver: Receiver | undefined;

  afterAll(async () => {
    await stopAllProcesses();
    await receiver?.close();
    await store?.cleanup();
  });

  it('makes one contact, answers one inserted, and delivers one new_contact', async () => {
    store = await serviceStore(engine);
    receiver = await startReceiver();
    const web = await startWeb({ ...baseEnv, ...store.env });
    const http = client(web.url);
    const api = http.api(await http.newKey('race'));
    expect((await api('POST', '/hooks', { event: 'new_contact', target_url: `${receiver.url}/race` })).status).toBe(201);

    const phone = newPhone();
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => api('POST', '/contacts', { phone, name: `Racer ${i}` })));
    await receiver.waitFor(1, 10_000);
    await sleep(1500); // a second delivery would arrive here
    await web.stop('SIGTERM');

    const statuses = countBy(answers, (answer) => String(answer.status));
    const actions = countBy(answers, (answer) => String(answer.body?.action));
    const contactIds = new Set(answers.map((answer) => answer.body?.contact_id));
    const [row] = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM contacts WHERE account_id = 'race' AND phone = $1", [phone]);
    const [events] = await store.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE account_id = 'race' AND event_type = 'new_contact' AND data->>'phone' = $1",
      [phone],
    );
    const deliveries = receiver.requests.filter((request) => JSON.parse(request.body).data.phone === phone);
    console.info(
      `[concurrentUpsert ${engine}] answers: ${JSON.stringify(Object.fromEntries(statuses))}, ` +
        `actions: ${JSON.stringify(Object.fromEntries(actions))}, contact rows: ${row!.n}, contact ids answered: ${contactIds.size}, ` +
        `new_contact events: ${events!.n}, new_contact deliveries: ${deliveries.length}`,
    );
    expect(statuses.get('200')).toBe(RACERS);
    expect(actions.get('inserted')).toBe(1);
    expect(actions.get('updated')).toBe(RACERS - 1);
    expect(contactIds.size).toBe(1);
    expect(row!.n).toBe(1);
    expect(events!.n).toBe(1);
    expect(deliveries).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
  });
});
