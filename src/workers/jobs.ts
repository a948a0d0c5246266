/** An event to fan out into one delivery per subscription (queue `events`). */
export interface EventJob {
  eventId: string;
}

import type { QueuedDelivery } from '../storage/events.js';

/** One delivery: an event to one subscription (queue `deliveries`). */
export interface DeliveryJob {
  deliveryId: string;
  accountId: string;
  targetUrl: string;
  /** The subscription's own pace; null means DELIVERY_RATE_PER_TARGET. */
  maxPerSecond: number | null;
  /** When the delivery row was created, epoch ms: DELIVERY_MAX_WAIT counts from here. */
  queuedAt: number;
  /** Its scheduled time at the pacer (pacer's clock); absent until scheduled. */
  slot?: number;
  /** Its time at the pacer's gate (pacer's clock), once its scheduled time has come. */
  sendAt?: number;
  /** Times this job stepped aside because its account or host had too much in flight. */
  deferrals?: number;
}

/** A queued delivery's job, not yet scheduled: as fan-out creates it, and as the relay restores it. */
export const deliveryJobOf = (row: QueuedDelivery): DeliveryJob => ({
  deliveryId: row.delivery_id,
  accountId: row.account_id,
  targetUrl: row.target_url,
  maxPerSecond: row.max_per_second,
  queuedAt: row.queued_at.getTime(),
});
