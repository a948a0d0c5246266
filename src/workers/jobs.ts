import type { QueuedDelivery } from '../storage/events.js';

/** One delivery: an event to one subscription, as the engine passes it around. */
export interface DeliveryJob {
  deliveryId: string;
  accountId: string;
  targetUrl: string;
  /** The subscription's own pace; null means DELIVERY_RATE_PER_TARGET. */
  maxPerSecond: number | null;
  /** When the delivery was queued (its event fired), epoch ms: DELIVERY_MAX_WAIT counts from here. */
  queuedAt: number;
  /** Its place in line at the target's gate (the pacer's clock), once it has one. */
  place?: number;
  /** When its place comes (epoch ms, this process's clock): it is not run before. */
  dueAt?: number;
  /** Its turn among its account's deliveries due in the same second (src/domain/turns.ts). */
  turn?: number;
}

/** A queued delivery's job: as fan-out creates it (no place yet), and as the relay restores it (with the place it waited for). */
export const deliveryJobOf = (row: QueuedDelivery): DeliveryJob => ({
  deliveryId: row.delivery_id,
  accountId: row.account_id,
  targetUrl: row.target_url,
  maxPerSecond: row.max_per_second,
  queuedAt: row.queued_at.getTime(),
  ...(row.place != null && { place: row.place }),
});
