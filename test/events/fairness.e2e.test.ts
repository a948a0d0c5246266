import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACE_WINDOW_MS } from '../../src/domain/pacing.js';
import { waitUntil } from '../support/processes.js';
import { stackShapes, startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

const DELIVERY_TIMEOUT_MS = 4_000;

/**
 * No head-of-line blocking, in both shapes: another account's deliveries go out at once while one
 * target drains a long paced backlog, and while one account's targets hang; and a paced target
 * keeps its pace while another account's burst has more due than the workers can send. Waiting
 * deliveries hold no worker, in-flight caps keep one account to a part of the capacity, and due
 * deliveries run in turns between accounts. The production shape runs on one Redis server and on
 * a Redis Cluster.
 */
describe.each(stackShapes())('fairness between accounts, $label', ({ label, mode, redis }) => {
  let stack: Stack;
  let other: ReturnType<Stack['http']['api']>;
  let otherPhone = 4_157_770_000;

  beforeAll(async () => {
    stack = await startStack({
      mode,
      redis,
      workers: mode === 'workers' ? 1 : 0,
      env: { LOG_LEVEL: 'warn', DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS), DELIVERY_CONCURRENCY: '16' },
    });
    other = stack.http.api(await stack.http.newKey('other-account'));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /**
   * Fires `count` new_contact events for the other account; resolves when the receiver has them
   * all at `path`, with how long each took from its upsert's answer to its POST's receipt.
   */
  async function otherAccountDelivers(path: string, count: number) {
    const created = await other('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}${path}` });
    expect(created.status).toBe(201);
    const firedAt = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const phone = `+1${otherPhone++}`;
      expect((await other('POST', '/contacts', { phone })).body.action).toBe('inserted');
      firedAt.set(phone, Date.now());
    }
    await waitUntil(() => stack.received(path).length >= count, 15_000);
    return stack.received(path).map((request) => request.receivedAt - firedAt.get(JSON.parse(request.body).data.phone)!);
  }

  it("delivers another account's events within 2 s while one account's paced backlog of 1,000 drains", async () => {
    const backlogHook = await stack.subscribe('/backlog'); // 20 POSTs a second: 1,000 events are a 50 s backlog
    for (let i = 0; i < 1_000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          stack.http.internal('POST', '/accounts/acme/contacts/sync', { phone: `+1415666${String(i + j).padStart(4, '0')}`, source: 'crm' }),
        ),
      );
    }
    await waitUntil(() => stack.received('/backlog').length >= 1, 10_000);
    const waits = await otherAccountDelivers('/other-during-backlog', 5);
    const backlogSent = stack.received('/backlog').length;
    console.info(`[fairness ${label}] the other account's 5 deliveries took ${waits.join(', ')} ms, while the backlog had sent ${backlogSent} of 1,000`);
    expect(Math.max(...waits)).toBeLessThan(2_000);
    // In a queue served in arrival order they would come after all 1,000.
    expect(backlogSent).toBeLessThan(500);
    // The rest of the backlog is dropped, unsent, so that it does not load the tests after this one.
    expect((await stack.api('DELETE', `/hooks/${backlogHook}`)).status).toBe(200);
  });

  it("delivers another account's events while one account's targets hang", async () => {
    for (let i = 0; i < 10; i++) {
      stack.answers[`/hang${i}`] = () => ({ neverRespond: true });
      await stack.subscribe(`/hang${i}`, 'new_conversation');
    }
    const call = { channel: 'voice', outcome: 'answered', spam: false, caller_name: 'Caller', caller_number: '+14155550142', summary: 'hello' };
    await Promise.all(Array.from({ length: 70 }, () => stack.http.internal('POST', '/accounts/acme/calls', call)));
    await waitUntil(() => stack.receiver.requests.some((request) => request.path.startsWith('/hang')), 10_000);
    const firstHang = Math.min(...stack.receiver.requests.filter((request) => request.path.startsWith('/hang')).map((request) => request.receivedAt));

    await otherAccountDelivers('/other-during-hang', 5);
    const lastOther = Math.max(...stack.received('/other-during-hang').map((request) => request.receivedAt));
    const hanging = stack.receiver.requests.filter((request) => request.path.startsWith('/hang')).length;
    console.info(
      `[fairness ${label}] the other account's 5 deliveries arrived ${lastOther - firstHang} ms after the first hang; ${hanging} POSTs hung meanwhile`,
    );
    // Before the first hung POST timed out, freeing a worker: the hung account never held them all.
    expect(lastOther - firstHang).toBeLessThan(DELIVERY_TIMEOUT_MS);
  });

  it("keeps another account's paced target at its pace while one account's burst is due at once", async () => {
    // Two accounts of their own: the tests above leave acme's hung deliveries holding its share.
    const steadyAccount = stack.http.api(await stack.http.newKey('steady-account'));
    expect((await steadyAccount('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}/steady` })).status).toBe(201);
    for (let i = 0; i < 200; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          stack.http.internal('POST', '/accounts/steady-account/contacts/sync', { phone: `+1415667${String(i + j).padStart(4, '0')}`, source: 'crm' }),
        ),
      );
    } // 20 POSTs a second: a 10 s backlog
    await waitUntil(() => stack.received('/steady').length >= 20, 15_000);

    // 8 hooks that take 1,000 POSTs a second each, and 150 new contacts at once: 1,200 deliveries
    // due together, far more than the workers' 16 slots send in a second.
    const burst = stack.http.api(await stack.http.newKey('burst-account'));
    const paths = Array.from({ length: 8 }, (_, i) => `/burst${i}`);
    for (const path of paths) {
      expect((await burst('POST', '/hooks', { event: 'new_contact', target_url: `${stack.receiver.url}${path}`, max_per_second: 1000 })).status).toBe(201);
    }
    for (let i = 0; i < 150; i += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, j) => burst('POST', '/contacts', { phone: `+1415668${String(i + j).padStart(4, '0')}` })));
    }
    const burstArrivals = () => stack.receiver.requests.filter((request) => paths.includes(request.path)).map((request) => request.receivedAt);
    await waitUntil(() => burstArrivals().length >= 1_200, 60_000);

    // The window: the burst's first to last receipt, while the paced target still had a backlog.
    const steady = stack.received('/steady').map((request) => request.receivedAt);
    const from = Math.min(...burstArrivals());
    const to = Math.min(Math.max(...burstArrivals()), Math.max(...steady));
    const steadyDuring = steady.filter((at) => at >= from && at <= to).length;
    // The gate lets 20 POSTs leave in any window of a second and its jitter allowance.
    const atPace = ((to - from) / PACE_WINDOW_MS) * 20;
    console.info(
      `[fairness ${label}] during ${to - from} ms of another account's 1,200-delivery burst the paced target got ${steadyDuring} POSTs; its pace allows ${atPace.toFixed(1)}`,
    );
    // When a late wake gave up its time at the gate, the paced target got about half its pace
    // here; keeping its place, and running by turns with the burst, it gets 0.75 to 0.9 of it on
    // two loaded cores, where every POST of the burst and its receipt share them.
    expect(steadyDuring).toBeGreaterThanOrEqual(0.65 * atPace);
  });
});
