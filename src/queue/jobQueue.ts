/**
 * Where deliveries that must wait a while are kept until their time, off the process: BullMQ's
 * delayed jobs on Redis (web + workers). A kept job holds no worker; at its time a worker takes
 * it into its own local queue (localQueue.ts), which sends it.
 */
export interface DelayedJob<Data> {
  /** Unique per wait (a delivery id and its place; BullMQ refuses ':' in ids): adding a kept id again is a no-op. */
  id: string;
  data: Data;
  /** Epoch ms: the job comes back a moment before this (see WAKE_EARLY_MS), never much after. */
  runAt: number;
}

export interface DelayQueue<Data> {
  /** Keeps the jobs until their time. Rejects when the queue cannot take them now. */
  add(jobs: DelayedJob<Data>[]): Promise<void>;
  /** Jobs waiting for their time, and jobs due or being handed over. */
  counts(): Promise<{ ready: number; waiting: number }>;
  /** Throws when the queue's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
