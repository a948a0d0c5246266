import { randomUUID } from 'node:crypto';
import type { DeliveryStatus } from '../domain/delivery.js';
import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';

export function deliveryQueries(db: Sql) {
  return {
    /**
     * Claims the one delivery of an event to a hook, before anything is sent. The unique
     * (event_id, hook_id) makes the claim succeed once, whichever worker or retry asks; a hook
     * deleted before the claim is never claimed. Returns the delivery id, or undefined.
     */
    async claim(eventId: string, hookId: string): Promise<string | undefined> {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO deliveries (id, event_id, hook_id, status, attempted_at)
         SELECT $1, $2, id, 'sending', clock_timestamp() FROM hooks WHERE id = $3 AND deleted_at IS NULL
         ON CONFLICT (event_id, hook_id) DO NOTHING RETURNING id`,
        [randomUUID(), eventId, hookId],
      );
      return rows[0]?.id;
    },

    async record(
      deliveryId: string,
      outcome: { status: Exclude<DeliveryStatus, 'queued' | 'sending'>; responseStatus?: number; error?: string; durationMs: number },
    ) {
      await db.query('UPDATE deliveries SET status = $2, response_status = $3, error = $4, duration_ms = $5 WHERE id = $1', [
        deliveryId,
        outcome.status,
        outcome.responseStatus ?? null,
        outcome.error ?? null,
        outcome.durationMs,
      ]);
    },

    /** Latest attempts for a hook, newest first. */
    async listForHook(hookId: string, limit: number) {
      const { rows } = await db.query<{
        event_id: string;
        event: EventType;
        status: DeliveryStatus;
        response_status: number | null;
        error: string | null;
        duration_ms: number | null;
        queued_at: Date;
        attempted_at: Date | null;
      }>(
        `SELECT d.event_id, e.event_type AS event, d.status, d.response_status, d.error, d.duration_ms, d.queued_at, d.attempted_at
         FROM deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.hook_id = $1 ORDER BY d.queued_at DESC, d.id LIMIT $2`,
        [hookId, limit],
      );
      return rows;
    },
  };
}
