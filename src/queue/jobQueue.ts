/**
 * The transport between producers and the delivery engine: BullMQ on Redis (web + workers), or
 * the in-process queue of the embedded mode. Both run the same handlers (src/workers).
 */
export interface Job<Data> {
  /** Unique per unit of work (an event id, a delivery id): adding a pending id again is a no-op. */
  id: string;
  data: Data;
  /** Epoch ms before which the job does not run; a job waiting for its time holds no worker. */
  runAt?: number;
  /**
   * Among jobs ready at once, a lower number runs first (BullMQ's rule, which the embedded queue
   * follows): 1 before 2, and a job without one before any job with one; FIFO within each.
   */
  priority?: number;
}

/**
 * What a handler answers: nothing when the job is done, or "not yet": run it again at `runAt`
 * with `data`, and at `priority` when given (else the job keeps its own). Waiting this way holds
 * no worker slot (BullMQ moves the job to delayed).
 */
export type JobResult<Data> = void | { runAt: number; data: Data; priority?: number };

/** `signal` aborts when the queue closes, so a handler waiting out an outage can stop. */
export type JobHandler<Data> = (data: Data, signal: AbortSignal) => Promise<JobResult<Data>>;

export interface JobQueue<Data> {
  /** Hands new jobs over. Rejects when the queue cannot take them now; the outbox keeps them. */
  add(jobs: Job<Data>[]): Promise<void>;
  /**
   * Adds those of `jobs` the queue does not hold pending: never added, lost, or finished or
   * failed and still kept under their id (which would otherwise block them). The outbox relay's
   * way in. Adds as many as the queue has room for; returns how many were added.
   */
  restore(jobs: Job<Data>[]): Promise<number>;
  /** Jobs ready or running, and jobs waiting for their time. */
  counts(): Promise<{ ready: number; waiting: number }>;
  /** Throws when the queue's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
