import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Store } from '../../src/storage/store.js';
import { createTurnCounter } from '../../src/domain/turns.js';
import { createDeliverer } from '../../src/workers/deliver.js';
import { createLocalPacer } from '../../src/workers/pacer.js';
import { createPoster, type Poster } from '../../src/workers/poster.js';
import type { Delivery, DeliveryJobData } from '../../src/domain/delivery.js';
import { collectingQueue, issueKey } from '../support/app.js';
import { engines, newContactDeliveries, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createTestCertificate } from '../support/tls.js';

const log = pino({ level: 'silent' });
const COPIES = 60;
let phone = 2000;

/**
 * A worker handed deliveries it cannot claim: copies another worker already sent (a relay hands
 * them over in bursts) and deliveries whose subscription was deleted. Nothing is sent for any of
 * them, the deleted subscription's deliveries are dropped, and the drops of a burst share
 * statements: one statement each once opened a connection per copy, up to the whole pool.
 */
describe.each(engines())('a worker handed deliveries it cannot claim, on %s', (engine) => {
  const t = useTestStore(engine);
  let receiver: Receiver;
  let poster: Poster;

  beforeAll(async () => {
    receiver = await startReceiver();
    poster = createPoster({ timeoutMs: 2_000, allowPrivateNetworks: true, connect: { ca: createTestCertificate().cert } });
  });
  afterAll(async () => {
    await poster?.close();
    await receiver?.close();
  });

  /** `count` queued deliveries to a new subscription on the receiver; their jobs and the hook's id. */
  async function queuedJobs(path: string, count: number) {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    const created = await t.store.hooks.create(
      { keyId: key.id, accountId },
      { eventType: 'new_contact', targetUrl: `${receiver.url}${path}`, maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
      10,
    );
    if (created.outcome !== 'created') throw new Error(created.outcome);
    const phones = Array.from({ length: count }, () => `+1415556${String(phone++)}`);
    return { jobs: await newContactDeliveries(t.store, accountId, phones), hookId: created.hook.id };
  }

  /** A deliverer as a worker builds it, on a store whose drop statements are counted. */
  function deliverer(dropStatements: number[]) {
    const store: Store = {
      ...t.store,
      deliveries: {
        ...t.store.deliveries,
        dropUnclaimable(ids) {
          dropStatements.push(ids.length);
          return t.store.deliveries.dropUnclaimable(ids);
        },
      },
    };
    return createDeliverer({
      store,
      pacer: createLocalPacer(1_000),
      poster,
      settings: { ratePerTarget: 1_000_000, maxWaitMs: 60_000 },
      metrics: createMetrics(),
      log,
      secretsKey: undefined,
      parking: { queue: collectingQueue<DeliveryJobData>().queue, keepsDelayedJobs: true },
      stopping: new AbortController().signal,
      disableRule: { afterMs: 86_400_000, minFailures: 1_000_000 },
      turnOf: createTurnCounter(),
    });
  }

  /** Runs each through the handler as the line would (again, as it asks, until done), and returns what became of each. */
  const deliverAll = async (worker: ReturnType<typeof deliverer>, jobs: Delivery[]) => {
    const deliverOne = async (job: Delivery) => {
      for (
        let step = await worker.deliver(job, new AbortController().signal, () => {});
        ;
        step = await worker.deliver(step.again.data, new AbortController().signal, () => {})
      ) {
        if ('done' in step) return (await step.done).status;
      }
    };
    const statuses = await Promise.all(jobs.map(deliverOne));
    await worker.settled();
    return statuses;
  };

  it('sends none of them, drops those of a deleted subscription, and drops a burst in shared statements', async () => {
    const sent = await queuedJobs('/sent', COPIES);
    const gone = await queuedJobs('/gone', COPIES);
    await t.store.hooks.deleteGone(gone.hookId);
    expect(await deliverAll(deliverer([]), sent.jobs)).toStrictEqual(sent.jobs.map(() => 'delivered'));
    expect(receiver.requests.filter((request) => request.path === '/sent')).toHaveLength(COPIES);

    // The relay's burst: copies of the deliveries sent above, and the deleted subscription's.
    const dropStatements: number[] = [];
    // Each reported: a copy another run claimed first, or dropped.
    expect(await deliverAll(deliverer(dropStatements), [...sent.jobs, ...gone.jobs])).toStrictEqual([
      ...sent.jobs.map(() => 'already_claimed'),
      ...gone.jobs.map(() => 'dropped'),
    ]);
    expect(receiver.requests.filter((request) => request.path === '/sent')).toHaveLength(COPIES);
    expect(receiver.requests.filter((request) => request.path === '/gone')).toHaveLength(0);
    const { rows } = await t.db.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM deliveries WHERE id = ANY($1::uuid[]) GROUP BY status',
      [[...sent.jobs, ...gone.jobs].map((job) => job.id)],
    );
    expect(rows).toStrictEqual([{ status: 'delivered', n: COPIES }]);
    expect(dropStatements.reduce((sum, size) => sum + size, 0)).toBe(2 * COPIES);
    // Every claim of the burst fails at once; their drops share a statement or two, not one each.
    expect(dropStatements.length).toBeLessThanOrEqual(4);
  });
});
