/** An event to fan out into one delivery per subscription (queue `events`). */
export interface EventJob {
  eventId: string;
}

/** One delivery: an event to one subscription (queue `deliveries`). */
export interface DeliveryJob {
  deliveryId: string;
  accountId: string;
  targetUrl: string;
  /** The subscription's own pace; null means DELIVERY_RATE_PER_TARGET. */
  maxPerSecond: number | null;
  /** When the delivery row was created, epoch ms: DELIVERY_MAX_WAIT counts from here. */
  queuedAt: number;
  /** The slot reserved at the pacer, in the pacer's clock; absent until one is reserved. */
  slot?: number;
  /** Times this job stepped aside because its account or host had too much in flight. */
  deferrals?: number;
}
