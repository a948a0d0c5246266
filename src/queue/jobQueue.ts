/**
 * The service's two queues: `events`, one job per fired event (its id is the event's), and
 * `deliveries`, one job per delivery that waits for a later time or that the relay brings back.
 * Two backends take them: BullMQ on Redis (web + workers, ./bullmq.ts) and a queue inside the one
 * embedded process (./inProcessQueue.ts). The same handlers (src/workers) run behind both.
 */
export const QUEUE_NAMES = ['events', 'deliveries'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobToAdd<Data> {
  /** Unique per unit of work: adding an id the queue holds already adds nothing. */
  id: string;
  /** What an operator reads in the job list: the event type, or the delivery's reason to wait. */
  name: string;
  /** Small, and never a secret: job data is clear text in Redis and on Bull Board. */
  data: Data;
  /** Epoch ms: a delayed job waits until then. */
  runAt?: number;
  /**
   * Among jobs waiting, a lower number runs first, in arrival order within one (1 to 2^21); one
   * without runs before any with one. An event's is its account's turn (src/domain/turns.ts), so
   * one account's burst does not hold another account's events behind it.
   */
  priority?: number;
}

/** The highest priority number BullMQ takes. */
export const LOWEST_PRIORITY = 2 ** 21 - 1;

export const JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
export type JobCounts = Record<(typeof JOB_STATES)[number], number>;

/** A producer's side of one queue. */
export interface JobQueue<Data> {
  /**
   * Adds the jobs; rejects when the queue cannot take them now. `again`: the relay adds work
   * that was never done, and a kept failed job of the same id (its fan-out failed) runs again.
   */
  add(jobs: JobToAdd<Data>[], options?: { again?: boolean }): Promise<void>;
  counts(): Promise<JobCounts>;
  /** Throws when the queue's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The job a handler runs, as far as a handler needs it. */
export interface RunningJob {
  id: string;
  name: string;
  /** Shown with the job while it runs; not awaited, and a lost report changes nothing. */
  reportProgress(progress: object): void;
}

/** Does one job; what it resolves to is the job's return value. A rejection fails the job, which is never retried. */
export type JobHandler<Data, Result> = (data: Data, job: RunningJob) => Promise<Result>;
