import type { Logger } from 'pino';
import type { JobQueue } from '../queue/jobQueue.js';
import type { OutboxCursor } from '../storage/events.js';
import type { Store } from '../storage/store.js';
import { deliveryJobOf, type DeliveryJob, type EventJob } from './jobs.js';

export interface RelayOptions {
  /** How often undispatched events are looked for. */
  eventIntervalMs?: number;
  /** How often queued deliveries are checked for a lost job (each pass walks all of them). */
  deliveryIntervalMs?: number;
  /** Work younger than this was just handed to a queue by its producer; leave it be. */
  graceMs?: number;
  /** Rows per page; a pass reads page after page until it has seen them all. */
  pageSize?: number;
}

/**
 * The database is the outbox; this puts back on the queues whatever the database says is
 * pending and the queues do not hold: events never fanned out (Redis was away at ingest, a
 * fan-out job failed, the process died), and queued deliveries whose job was lost (a crash
 * between fan-out and enqueue, a job that failed before its claim, the embedded process
 * restarting). restore() skips jobs the queue still holds pending, so a paced delivery waiting
 * for its slot is left alone, and replaces finished ones that would block their id. Running a
 * job twice is safe: fan-out happens once per event, and the claim allows one POST per delivery.
 */
export function startOutboxRelay(
  store: Store,
  queues: { events: JobQueue<EventJob>; deliveries: JobQueue<DeliveryJob> },
  log: Logger,
  options: RelayOptions = {},
) {
  const { eventIntervalMs = 1_000, deliveryIntervalMs = 5_000, graceMs = 5_000, pageSize = 500 } = options;

  /** Walks every page of a scan, handing each to `restore`; returns how many jobs were restored. */
  async function walk<Row>(
    page: (cursor: OutboxCursor | undefined) => Promise<Row[]>,
    restore: (rows: Row[]) => Promise<number>,
    cursorOf: (row: Row) => OutboxCursor,
  ) {
    let restored = 0;
    for (let cursor: OutboxCursor | undefined; ; ) {
      const rows = await page(cursor);
      if (rows.length > 0) restored += await restore(rows);
      if (rows.length < pageSize) return restored;
      cursor = cursorOf(rows[rows.length - 1]!);
    }
  }

  const relayEvents = () =>
    walk(
      (cursor) => store.events.listUndispatched(graceMs, cursor, pageSize),
      (rows) => queues.events.restore(rows.map((row) => ({ id: row.id, data: { eventId: row.id } }))),
      (row) => ({ at: row.at, id: row.id }),
    );

  const relayDeliveries = () =>
    walk(
      (cursor) => store.deliveries.listQueued(graceMs, cursor, pageSize),
      (rows) => queues.deliveries.restore(rows.map((row) => ({ id: row.delivery_id, data: deliveryJobOf(row) }))),
      (row) => ({ at: row.at, id: row.delivery_id }),
    );

  function every(intervalMs: number, what: string, pass: () => Promise<number>) {
    let running: Promise<void> | undefined;
    const run = () =>
      pass().then(
        (restored) => {
          if (restored > 0) log.info({ restored }, `relayed ${what} from the outbox`);
        },
        (error: unknown) => log.warn({ err: error }, `outbox relay of ${what} failed; trying again`),
      );
    const timer = setInterval(() => {
      running ??= run().finally(() => (running = undefined));
    }, intervalMs);
    return async () => {
      clearInterval(timer);
      await running;
    };
  }

  const stops = [every(eventIntervalMs, 'events', relayEvents), every(deliveryIntervalMs, 'deliveries', relayDeliveries)];
  return {
    async stop() {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
