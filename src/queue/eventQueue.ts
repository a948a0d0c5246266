/**
 * Where fired events go to be delivered. The web process only produces; workers (or, in
 * embedded mode, the same process) consume with the one job handler, `deliverEvent`.
 */
export interface EventQueue {
  /** Hands events over for delivery. Rejects when the queue cannot take them now; the outbox keeps them. */
  enqueue(eventIds: string[]): Promise<void>;
  /** Jobs waiting or running, for /metrics and operators. */
  depth(): Promise<number>;
  /** Throws when the queue's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The job handler both queues run: delivers one event to every subscription it goes to. */
export type EventJobHandler = (eventId: string) => Promise<void>;
