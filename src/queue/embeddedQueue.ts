import type { Logger } from 'pino';
import type { Job, JobHandler, JobQueue } from './jobQueue.js';
import { createReadyLine } from './readyLine.js';

/**
 * The queue of the single-process embedded mode: bounded, in memory, running the same handlers
 * as the BullMQ workers, in the same order (priority, then arrival). A job that answers "not yet"
 * waits on a timer, holding no running slot.
 * When full it refuses, and the work waits in the outbox for the relay. Nothing here survives a
 * restart; the outbox relay restores what was pending.
 */
export function createEmbeddedQueue<Data>(
  handler: JobHandler<Data>,
  options: { capacity: number; concurrency: number; log: Logger; name: string },
): JobQueue<Data> {
  const ready = createReadyLine<Data>();
  const known = new Set<string>(); // ready, waiting for their time, or running: like a BullMQ job id
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const closing = new AbortController();

  const settle = (job: Job<Data>, result: Awaited<ReturnType<JobHandler<Data>>>) => {
    if (result && !closing.signal.aborted) schedule({ ...job, data: result.data, runAt: result.runAt, priority: result.priority ?? job.priority });
    else known.delete(job.id);
  };

  const pump = () => {
    while (!closing.signal.aborted && running.size < options.concurrency) {
      const job = ready.shift();
      if (job === undefined) return;
      const run: Promise<void> = handler(job.data, closing.signal)
        .then(
          (result) => settle(job, result),
          (error: unknown) => {
            known.delete(job.id);
            options.log.error({ err: error, queue: options.name, jobId: job.id }, 'job failed; the outbox relay restores it if its work is not done');
          },
        )
        .finally(() => {
          running.delete(run);
          pump();
        });
      running.add(run);
    }
  };

  function schedule(job: Job<Data>) {
    const delay = (job.runAt ?? 0) - Date.now();
    if (delay <= 0) {
      ready.push(job);
      return pump();
    }
    timers.set(
      job.id,
      setTimeout(() => {
        timers.delete(job.id);
        ready.push(job);
        pump();
      }, delay),
    );
  }

  const unknown = (jobs: Job<Data>[]) => jobs.filter((job) => !known.has(job.id));
  const take = (jobs: Job<Data>[]) => {
    for (const job of jobs) known.add(job.id);
    for (const job of jobs) schedule(job);
  };

  return {
    async add(jobs) {
      const fresh = unknown(jobs);
      if (closing.signal.aborted || known.size + fresh.length > options.capacity) {
        throw new Error(`embedded ${options.name} queue is full or closed`);
      }
      take(fresh);
    },
    // The relay takes what fits; the rest stays in the outbox for its next pass.
    async restore(jobs) {
      const room = closing.signal.aborted ? 0 : Math.max(0, options.capacity - known.size);
      const taken = unknown(jobs).slice(0, room);
      take(taken);
      return taken.length;
    },
    counts: async () => ({ ready: known.size - timers.size, waiting: timers.size }),
    ping: async () => {},
    async close() {
      closing.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}
