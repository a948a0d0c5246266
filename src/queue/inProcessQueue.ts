import type { Logger } from 'pino';
import type { JobCounts, JobHandler, JobQueue, JobToAdd, QueueName } from './jobQueue.js';
import { createReadyLine } from './readyLine.js';

/**
 * The embedded mode's stand-in for a BullMQ queue and its worker, in the one process: jobs wait
 * by priority, then in arrival order (a delayed one on a timer until its time), as BullMQ's do,
 * and run `concurrency` at once
 * through the same handler a worker runs. Nothing here survives the process: what it held is in
 * the database (the event outbox, queued deliveries), and the relay adds it again.
 *
 * It holds at most `capacity` jobs; what is added past that is left to the relay, which adds it
 * again once it is overdue, as it does when Redis is away in the other mode.
 */
export function createInProcessQueue<Data, Result>(
  name: QueueName,
  handler: JobHandler<Data, Result>,
  options: { concurrency: number; capacity: number; log: Logger },
): JobQueue<Data> & { room(): number } {
  const waiting = createReadyLine<JobToAdd<Data>>();
  const enqueue = (job: JobToAdd<Data>) => waiting.push(job, job.priority ?? 0);
  const timers = new Map<string, NodeJS.Timeout>();
  const held = new Set<string>(); // waiting, delayed or active
  const running = new Set<Promise<void>>();
  const finished = { completed: 0, failed: 0 };
  let closed = false;

  function pump() {
    while (!closed && running.size < options.concurrency) {
      const job = waiting.shift();
      if (job === undefined) return;
      const run: Promise<void> = handler(job.data, { id: job.id, name: job.name, reportProgress: () => {} })
        .then(
          () => void finished.completed++,
          (error: unknown) => {
            finished.failed++;
            options.log.error({ err: error, queue: name, jobId: job.id }, 'job failed; the relay adds its work again when it is overdue');
          },
        )
        .finally(() => {
          held.delete(job.id);
          running.delete(run);
          pump();
        });
      running.add(run);
    }
  }

  const room = () => (closed ? 0 : Math.max(0, options.capacity - held.size));

  return {
    room,
    async add(jobs) {
      for (const job of jobs) {
        if (held.has(job.id) || room() === 0) continue;
        held.add(job.id);
        const delay = (job.runAt ?? 0) - Date.now();
        if (delay <= 0) enqueue(job);
        else
          timers.set(
            job.id,
            setTimeout(() => {
              timers.delete(job.id);
              enqueue(job);
              pump();
            }, delay),
          );
      }
      pump();
    },
    async counts(): Promise<JobCounts> {
      return { waiting: waiting.size, active: running.size, delayed: timers.size, ...finished };
    },
    ping: async () => {},
    /** Takes no new jobs, drops those waiting (the relay has them), and waits for the running ones. */
    async close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      waiting.clear();
      await Promise.all(running);
    },
  };
}
