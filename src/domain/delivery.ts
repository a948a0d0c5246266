/**
 * The life of one delivery (an event to one subscription). queued: created at fan-out, waiting
 * for its slot at the target; sending: claimed just before its POST (if it stays, the worker died
 * mid-attempt); then delivered (2xx), failed (any other answer or a network error), refused (the
 * address policy), or expired (it waited past DELIVERY_MAX_WAIT and was never sent).
 */
export const DELIVERY_STATUSES = ['queued', 'sending', 'delivered', 'failed', 'refused', 'expired'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
