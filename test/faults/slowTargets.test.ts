import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../support/client.js';
import { engines } from '../support/databases.js';
import { sleep, startWeb, stopAllProcesses, waitUntil } from '../support/processes.js';
import { startReceiver, type Receiver, type ReceiverResponse } from '../support/receiver.js';
import { baseEnv, countBy, newPhone, percentile, serviceStore, type ServiceStore } from './support.js';

const EVENTS = 30;
const SPACING_MS = 100;
const TIMEOUT_MS = 4000;
const SLOW_MS = 3000;

/** How each kind of bad target answers. */
const BAD: Record<string, ReceiverResponse> = {
  never: { neverRespond: true },
  slow: { delayMs: SLOW_MS },
  huge: { body: Buffer.alloc(5 * 1024 * 1024, 'x') },
};

/**
 * Targets that never answer, answer after 3 s, or send 5 MB back must not hold back a normal
 * target: its deliveries keep their latency. DELIVERY_TIMEOUT_MS is 4 s, so the slow target can
 * be answered and the silent one times out. Embedded mode, default DELIVERY_CONCURRENCY (256),
 * 32 parallel POSTs per event.
 */
describe('slow, silent and huge targets beside a normal one', () => {
  const engine = engines().at(-1)!; // PostgreSQL when there is one: a new PGlite store is slow to create
  let store: ServiceStore;
  let http: ReturnType<typeof client>;
  const receivers: Receiver[] = [];

  const receiver = async (respond?: (path: string) => ReceiverResponse) => {
    const started = await startReceiver({ respond: respond && ((request) => respond(request.path)) });
    receivers.push(started);
    return started;
  };
  const summary = (latencies: number[]) => `p50 ${percentile(latencies, 50)} ms, p90 ${percentile(latencies, 90)} ms, max ${Math.max(...latencies)} ms`;

  beforeAll(async () => {
    store = await serviceStore(engine);
    const web = await startWeb({ ...baseEnv, ...store.env, DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
    http = client(web.url);
  });

  afterAll(async () => {
    await stopAllProcesses();
    await Promise.all(receivers.map((started) => started.close()));
    await store?.cleanup();
  });

  /** One account: the normal target alone (baseline), then beside the three bad ones. */
  async function compare(label: string, normalUrl: string, normal: Receiver, badUrls: Record<string, string>) {
    const api = http.api(await http.newKey(`slow-${label.replace(/\W/g, '-')}`));
    const path = new URL(normalUrl).pathname;
    const subscribe = async (target: string) => {
      const created = await api('POST', '/hooks', { event: 'new_contact', target_url: target });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    /** Fires EVENTS new_contact events; returns each one's event-to-receipt latency at the normal target. */
    const fireAndMeasure = async () => {
      const firedAt = new Map<string, number>();
      for (let i = 0; i < EVENTS; i++) {
        const phone = newPhone();
        firedAt.set(phone, Date.now());
        expect((await api('POST', '/contacts', { phone })).body.action).toBe('inserted');
        await sleep(SPACING_MS);
      }
      const latencies = () =>
        normal.requests.flatMap((request) => {
          const fired = firedAt.get(JSON.parse(request.body).data.phone);
          return fired === undefined || request.path !== path ? [] : [request.receivedAt - fired];
        });
      await waitUntil(() => latencies().length >= EVENTS, 20_000);
      return latencies();
    };

    await subscribe(normalUrl);
    const baseline = await fireAndMeasure();
    const hooks = Object.fromEntries(await Promise.all(Object.entries(badUrls).map(async ([name, url]) => [name, await subscribe(url)] as const)));
    const beside = await fireAndMeasure();

    // Every bad delivery was attempted and has ended (the silent ones by the timeout).
    const outcomes: Record<string, Record<string, number>> = {};
    for (const [name, id] of Object.entries(hooks)) {
      const finished = async () =>
        ((await api('GET', `/hooks/${id}/deliveries`)).body.deliveries as Array<{ status: string; error: string | null }>).filter(
          (delivery) => delivery.status !== 'queued' && delivery.status !== 'sending',
        );
      await waitUntil(async () => (await finished()).length === EVENTS, 20_000);
      outcomes[name] = Object.fromEntries(countBy(await finished(), (d) => `${d.status}${d.error ? `:${d.error}` : ''}`));
    }
    console.info(
      `[slowTargets ${label}] ${EVENTS} events per run; normal target alone: ${summary(baseline)}; ` +
        `beside silent, ${SLOW_MS} ms and 5 MB targets: ${summary(beside)}; their outcomes: ${JSON.stringify(outcomes)}`,
    );
    expect(baseline).toHaveLength(EVENTS);
    expect(beside).toHaveLength(EVENTS);
    expect(outcomes.never).toStrictEqual({ 'failed:timeout': EVENTS });
    expect(outcomes.huge).toStrictEqual({ delivered: EVENTS });
    expect(percentile(beside, 50)).toBeLessThanOrEqual(percentile(baseline, 50) + 100);
    expect(percentile(beside, 50)).toBeLessThan(500);
  }

  it('keeps the normal target’s latency when each target has a host of its own', async () => {
    const normal = await receiver();
    const bad: Record<string, string> = {};
    for (const [name, response] of Object.entries(BAD)) bad[name] = `${(await receiver(() => response)).url}/${name}`;
    await compare('own hosts', `${normal.url}/normal`, normal, bad);
  });

  it('keeps the normal target’s latency when the bad targets are other paths on its host', async () => {
    // As on a shared automation platform (every Zap's hook on one host).
    const shared = await receiver((path) => BAD[path.slice(1)] ?? {});
    const bad = Object.fromEntries(Object.keys(BAD).map((name) => [name, `${shared.url}/${name}`]));
    await compare('one host', `${shared.url}/normal`, shared, bad);
  });
});
