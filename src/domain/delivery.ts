/**
 * The life of one delivery (an event to one subscription). queued: created at fan-out, waiting
 * for its slot at the target; sending: claimed just before its POST; then delivered (2xx), failed
 * (any other answer or a network error), refused (the address policy), expired (it waited past
 * DELIVERY_MAX_WAIT and was never sent), or unknown (still sending long after the delivery
 * timeout: its worker died mid-POST, so whether the target got it is unknown; never retried).
 */
export const DELIVERY_STATUSES = ['queued', 'sending', 'delivered', 'failed', 'refused', 'expired', 'unknown'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * An event in the outbox, or a queued delivery, is the process's that recorded it, fanned it out
 * or parked it, for this long after its time; past that it is overdue, and the relay adds its job
 * again.
 */
export const RELAY_GRACE_MS = 5_000;

/** One delivery (an event to one subscription) with what sending it needs, as storage gives it to the engine. */
export interface Delivery {
  id: string;
  eventId: string;
  hookId: string;
  accountId: string;
  targetUrl: string;
  /** The subscription's own pace; null means DELIVERY_RATE_PER_TARGET. */
  maxPerSecond: number | null;
  /** When its event fired, epoch ms: DELIVERY_MAX_WAIT counts from here. */
  queuedAt: number;
  /** Its place in line at its target's gate (the pacer's clock), once it has waited for one. */
  place?: number;
  /** How often it left the line because in-flight room did not come (its account's POSTs hang). */
  roomWaits?: number;
}

/**
 * What a job made of one delivery, as its return value lists it for operators: its status as the
 * delivery log names it (`queued` when it was parked to wait for its time, with `due_at`), or
 * `dropped` (its subscription or key was gone before the POST: nothing sent, the row removed), or
 * `already_claimed` (another run of the same delivery claimed it first: this one sent nothing).
 */
export interface DeliveryReport {
  hook_id: string;
  delivery_id: string;
  status: DeliveryStatus | 'dropped' | 'already_claimed';
  response_status: number | null;
  duration_ms: number | null;
  error?: string;
  due_at?: string;
}

/** A report of `delivery` with `status` and nothing sent. */
export const reportOf = (delivery: Pick<Delivery, 'id' | 'hookId'>, status: DeliveryReport['status'], extra: Partial<DeliveryReport> = {}): DeliveryReport => ({
  hook_id: delivery.hookId,
  delivery_id: delivery.id,
  status,
  response_status: null,
  duration_ms: null,
  ...extra,
});

/**
 * A job of the `deliveries` queue: a delivery parked until `due_at` (epoch ms), or relayed. Ids
 * only: job data is clear text, and a target URL can hold its receiver's secret; the job's
 * handler reads the rest from the database.
 */
export interface DeliveryJobData {
  delivery_id: string;
  event_id: string;
  hook_id: string;
  account_id: string;
  due_at: number;
  /** How often it left the line for in-flight room that did not come (a `waiting-for-room` job). */
  room_waits?: number;
}

/** The User-Agent of every delivery's POST. */
export const DELIVERY_USER_AGENT = 'contact-hooks/1.0';
