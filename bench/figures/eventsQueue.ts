/**
 * Figure 11: what one `events` queue carries, alone: the service's own BullMQ producer and
 * consumer (src/queue/bullmq.ts) on the run's Redis, jobs added in batches as the web's group
 * commits add them, each run by a handler that returns at once a return value shaped like a real
 * one. One queue lives in one hash slot, so this is one Redis shard's ceiling for events, beside
 * what the whole service delivers (figure 2).
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { redisNamespace } from '../../kit/redis.js';
import { waitUntil } from '../../kit/waiting.js';
import type { FiredEvent } from '../../src/domain/events.js';
import { createBullQueue, startBullConsumer } from '../../src/queue/bullmq.js';
import type { BenchContext } from '../context.js';
import { fmt, type FigureResult } from '../results.js';
import { SERVICE_DEFAULTS } from '../settings.js';
import { runCount } from '../support/clients.js';
import type { CpuWindow } from '../support/cpu.js';
import { monotonicMs } from '../support/load.js';

/** Jobs per add, as one group commit of a busy web process adds them, and adds in flight at once. */
const BATCH = 50;
const ADDS_IN_FLIGHT = 8;

export async function eventsQueue(ctx: BenchContext, serviceDeliveriesPerSecond?: number): Promise<FigureResult> {
  const total = BATCH * Math.max(40, Math.round((40_000 * ctx.settings.scale) / BATCH));
  const redis = redisNamespace(ctx.settings.redisUrl, 'contact-hooks-bench-queue');
  const settings = { target: redis.target, prefix: redis.prefix };
  const log = pino({ level: 'silent' });
  const kept = { completedMs: 3_600_000, completedCount: 10_000, failedMs: 3_600_000 };
  const producer = createBullQueue<FiredEvent>(settings, 'events', { log, failFast: false, kept });
  let done = 0;
  const consumer = startBullConsumer<FiredEvent, object>(
    settings,
    'events',
    async (event) => {
      done++;
      return { ...event, deliveries: [{ hook_id: event.account_id, delivery_id: event.event_id, status: 'delivered', response_status: 200, duration_ms: 3 }] };
    },
    { concurrency: 4 * SERVICE_DEFAULTS.DELIVERY_CONCURRENCY, lockMs: 30_000, kept, log },
  );
  const add = () =>
    producer.add(
      Array.from({ length: BATCH }, () => {
        const event: FiredEvent = { event_id: randomUUID(), event: 'new_contact', account_id: 'bench', fired_at: new Date().toISOString() };
        return { id: event.event_id, name: event.event, data: event };
      }),
    );
  try {
    ctx.progress(`figure 11: ${fmt(total)} jobs through one events queue, alone`);
    await runCount(ADDS_IN_FLIGHT, 20, add); // warm-up
    await waitUntil(() => done >= 20 * BATCH, 60_000, 'the warm-up jobs');
    done = 0;
    const windows: CpuWindow[] = [];
    const seconds = await ctx.cpu.metered(windows, async () => {
      const t0 = monotonicMs();
      await runCount(ADDS_IN_FLIGHT, total / BATCH, add);
      await waitUntil(() => done >= total, 300_000, 'every job to complete');
      return (monotonicMs() - t0) / 1000;
    });
    const perSecond = total / seconds;
    const cpu = ctx.cpu.record('one events queue alone (BullMQ add, run, complete)', windows, total).perOpMs;
    ctx.progress(`  ${fmt(perSecond)} jobs/s; Redis ${fmt(cpu.redis ?? 0, 3)} ms and BullMQ's Node side ${fmt(cpu.bench ?? 0, 3)} ms a job`);
    const headroom = serviceDeliveriesPerSecond === undefined ? undefined : perSecond / serviceDeliveriesPerSecond;
    return {
      data: { eventsQueue: { jobs: total, perSecond, cpuMsPerJob: cpu } },
      rows: [
        {
          figure: '11',
          what: `One events queue alone on one Redis (one hash slot): ${fmt(total)} jobs added ${BATCH} at a time, run and completed with a return value, keeping completed ones (CPU a job: Redis ${fmt(cpu.redis ?? 0, 3)} ms, BullMQ in Node ${fmt(cpu.bench ?? 0, 3)} ms)`,
          measured: `${fmt(perSecond)} jobs/s`,
          reference:
            serviceDeliveriesPerSecond === undefined
              ? '—'
              : `${fmt(serviceDeliveriesPerSecond)} deliveries/s: the service end to end, web + 1 worker (figure 2)`,
          ratio: headroom === undefined ? '—' : fmt(headroom, 1),
          goal: '—',
          result: 'reported',
        },
      ],
    };
  } finally {
    await consumer.close();
    await producer.close();
    await redis.cleanup();
  }
}
