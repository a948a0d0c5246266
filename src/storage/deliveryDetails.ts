import type { DeliveryStatus } from '../domain/delivery.js';
import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';
import { queuedRange } from './deliveryIds.js';

/** One delivery with what was sent: its event (data as stored JSON text) and its subscription's target. */
export interface DeliveryDetailRow {
  id: string;
  hook_id: string;
  event_id: string;
  event_type: EventType;
  data: string;
  test: boolean;
  target_url: string;
  status: DeliveryStatus;
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  queued_at: Date;
  attempted_at: Date | null;
}

export function deliveryDetailQueries(db: Sql) {
  return {
    /** One of the account's deliveries, found by its key within the day its id names (deliveryIds.ts). */
    async forAccount(accountId: string, deliveryId: string) {
      const { rows } = await db.query<DeliveryDetailRow>(
        `SELECT d.id, d.hook_id, d.event_id, e.event_type, e.data::text AS data, e.hook_id IS NOT NULL AS test, h.target_url,
           d.status, d.response_status, d.error, d.duration_ms, d.queued_at, d.attempted_at
         FROM deliveries d JOIN events e ON e.id = d.event_id JOIN hooks h ON h.id = d.hook_id
         WHERE d.id = $1 AND d.account_id = $2 AND d.queued_at >= $3::timestamptz AND d.queued_at < $4::timestamptz`,
        [deliveryId, accountId, ...queuedRange([deliveryId])],
      );
      return rows[0];
    },
  };
}
