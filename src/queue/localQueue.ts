import type { Logger } from 'pino';
import { createReadyLine } from './readyLine.js';

export interface LocalJob<Data> {
  /** Unique per unit of work (a delivery id): adding an id the queue holds is a no-op. */
  id: string;
  data: Data;
  /** Epoch ms before which the job does not run; a job waiting for its time holds no running slot. */
  runAt?: number;
  /** Among jobs ready at once, a lower number runs first; FIFO within one (none before any). */
  priority?: number;
}

/**
 * What a handler answers: nothing when the job is done (or handed elsewhere), or "not yet": run
 * it again at `runAt` with `data`, and at `priority` when given (else the job keeps its own).
 */
export type LocalJobResult<Data> = void | { runAt: number; data: Data; priority?: number };

/**
 * `signal` aborts when the queue closes, so a handler waiting out an outage can stop.
 * `release` gives the job's admitted room back early (it is given back when the handler ends anyway).
 */
export type LocalJobHandler<Data> = (data: Data, signal: AbortSignal, release: () => void) => Promise<LocalJobResult<Data>>;

/**
 * Room a job needs beyond a running slot (the delivery engine's in-flight caps). A job without
 * room waits for the key that had none, in line there by priority, holding nothing; each unit
 * of room given back under a key lets the best job waiting for that key try again.
 */
export interface Admission<Data> {
  take(data: Data): { release: () => void } | { waitFor: string };
  /** The keys whose room a job's release gives back. */
  keysOf(data: Data): string[];
}

/**
 * The process's own line of work, in front of its handler: jobs run `concurrency` at once, by
 * priority then arrival, each once it has the room `admission` asks for; a job waiting for its
 * time waits on a timer, and one waiting for room waits in line for it, holding no running slot. Every process that delivers has one (src/workers/deliveryEngine.ts). Nothing here
 * survives the process: what it held is in the database, and the outbox relay brings it back.
 */
export function createLocalQueue<Data>(
  handler: LocalJobHandler<Data>,
  options: { capacity: number; concurrency: number; log: Logger; name: string; admission?: Admission<Data> },
) {
  const ready = createReadyLine<LocalJob<Data>>();
  const waitingForRoom = new Map<string, ReturnType<typeof createReadyLine<LocalJob<Data>>>>();
  const known = new Set<string>(); // ready, waiting for their time, or running
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const closing = new AbortController();

  const settle = (job: LocalJob<Data>, result: LocalJobResult<Data>) => {
    if (result && !closing.signal.aborted) schedule({ ...job, data: result.data, runAt: result.runAt, priority: result.priority ?? job.priority });
    else known.delete(job.id);
  };

  /** Takes the job's room, or puts it in line for the key that has none. */
  const admit = (job: LocalJob<Data>): (() => void) | undefined => {
    if (!options.admission) return () => {};
    const taken = options.admission.take(job.data);
    if ('release' in taken) return taken.release;
    const line = waitingForRoom.get(taken.waitFor) ?? createReadyLine<LocalJob<Data>>();
    waitingForRoom.set(taken.waitFor, line);
    line.push(job, job.priority ?? 0);
    return undefined;
  };

  /** Gives a job's room back, once, and lets the best job waiting under each of its keys try again. */
  const releaser = (job: LocalJob<Data>, release: () => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      for (const key of options.admission?.keysOf(job.data) ?? []) {
        const line = waitingForRoom.get(key);
        const next = line?.shift();
        if (next) ready.push(next, next.priority ?? 0);
        if (line && line.size === 0) waitingForRoom.delete(key);
      }
      pump();
    };
  };

  function pump() {
    while (!closing.signal.aborted && running.size < options.concurrency) {
      const job = ready.shift();
      if (job === undefined) return;
      const admitted = admit(job);
      if (!admitted) continue;
      const release = releaser(job, admitted);
      const run: Promise<void> = handler(job.data, closing.signal, release)
        .then(
          (result) => settle(job, result),
          (error: unknown) => {
            known.delete(job.id);
            options.log.error({ err: error, queue: options.name, jobId: job.id }, 'job failed; the outbox relay restores it if its work is not done');
          },
        )
        .finally(() => {
          running.delete(run);
          release();
          pump();
        });
      running.add(run);
    }
  }

  function schedule(job: LocalJob<Data>) {
    const delay = (job.runAt ?? 0) - Date.now();
    if (delay <= 0) {
      ready.push(job, job.priority ?? 0);
      return pump();
    }
    timers.set(
      job.id,
      setTimeout(() => {
        timers.delete(job.id);
        ready.push(job, job.priority ?? 0);
        pump();
      }, delay),
    );
  }

  return {
    /** Takes the jobs it does not hold yet; returns how many it took (none once closing). */
    add(jobs: LocalJob<Data>[]) {
      if (closing.signal.aborted) return 0;
      const fresh = jobs.filter((job) => !known.has(job.id));
      for (const job of fresh) known.add(job.id);
      for (const job of fresh) schedule(job);
      return fresh.length;
    },
    /** How many more jobs it should be given: producers that can wait (fan-out, the relay) take no more than this. */
    room: () => (closing.signal.aborted ? 0 : Math.max(0, options.capacity - known.size)),
    /** Jobs ready or running, jobs waiting for their time, and jobs waiting for room. */
    counts: () => {
      let blocked = 0;
      for (const line of waitingForRoom.values()) blocked += line.size;
      return { ready: known.size - timers.size - blocked, waiting: timers.size, blocked };
    },
    /** Takes no new jobs, drops those waiting, and waits for the running ones. */
    async close() {
      closing.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      waitingForRoom.clear();
      await Promise.all(running);
    },
  };
}

export type LocalQueue<Data> = ReturnType<typeof createLocalQueue<Data>>;
