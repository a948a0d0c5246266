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
 * A queued delivery is its dispatcher's (the process that fanned it out, or parked it) for this
 * long after its time; past that it is overdue, and the relay hands it to a worker.
 */
export const RELAY_GRACE_MS = 5_000;

/** The User-Agent of every delivery's POST. */
export const DELIVERY_USER_AGENT = 'contact-hooks/1.0';
