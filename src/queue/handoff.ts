/**
 * How a producer (the web process's use cases) hands the deliveries its statement has just
 * committed to a worker, to be sent now: the web fans its events out itself, in the statement
 * that records them (storage/events.ts, `fanOutOf`). Only a hand: the deliveries are committed
 * already, each leased to the producer for RELAY_GRACE_MS, and the relay sends any that no
 * worker took by then. A hand that fails costs that wait, never a delivery.
 */
export interface DeliveryHandoff {
  handOff(deliveries: HandedDelivery[]): void;
  /** Throws when the handoff's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A committed delivery, with what its worker needs to pace it (storage's QueuedDelivery). */
export interface HandedDelivery {
  delivery_id: string;
  account_id: string;
  target_url: string;
  max_per_second: number | null;
  queued_at: Date;
}

/** The embedded process's: a direct call to its own engine. */
export function createLocalHandoff(): DeliveryHandoff & { listen(taker: (deliveries: HandedDelivery[]) => void): void } {
  const takers: ((deliveries: HandedDelivery[]) => void)[] = [];
  return {
    handOff: (deliveries) => takers.forEach((take) => take(deliveries)),
    listen: (taker) => void takers.push(taker),
    ping: async () => {},
    close: async () => {},
  };
}
