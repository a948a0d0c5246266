import type { DeliveryStatus } from '../domain/delivery.js';
import type { EventType } from '../domain/events.js';
import type { Sql } from './database.js';
import { NIL_UUID, type OutboxCursor, type QueuedDelivery } from './events.js';

/** What a claimed delivery needs to be sent: the event and the subscription's secret. */
export interface ClaimedDelivery {
  event_id: string;
  event_type: EventType;
  data: Record<string, unknown>;
  secret: string;
  target_url: string;
  hook_id: string;
  queued_at: Date;
  attempted_at: Date;
}

export type DeliveryOutcome = {
  status: Exclude<DeliveryStatus, 'queued' | 'sending' | 'expired' | 'unknown'>;
  responseStatus?: number;
  error?: string;
  durationMs: number;
};

export function deliveryQueries(db: Sql) {
  return {
    /**
     * Claims a queued delivery just before its POST: `queued` becomes `sending` once, whichever
     * worker, stalled job or relayed copy asks, so only one ever sends (at most once). It only
     * succeeds while the subscription and its key are live. `token` names the claimant: the same
     * claimant asking again (its first answer was lost with the connection) gets its claim back.
     */
    async claim(deliveryId: string, token: string): Promise<ClaimedDelivery | undefined> {
      const { rows } = await db.query<ClaimedDelivery>(
        `UPDATE deliveries d SET status = 'sending', claim_token = $2,
           attempted_at = CASE WHEN d.status = 'queued' THEN clock_timestamp() ELSE d.attempted_at END
         FROM hooks h, api_keys k, events e
         WHERE d.id = $1 AND (d.status = 'queued' OR (d.status = 'sending' AND d.claim_token = $2))
           AND h.id = d.hook_id AND h.deleted_at IS NULL
           AND k.id = h.api_key_id AND k.revoked_at IS NULL AND e.id = d.event_id
         RETURNING d.event_id, e.event_type, e.data, h.secret, h.target_url, h.id AS hook_id, d.queued_at, d.attempted_at`,
        [deliveryId, token],
      );
      return rows[0];
    },

    /**
     * Drops a queued delivery whose subscription or key is gone (unsubscribed, 410, revoked), so
     * the relay stops restoring it. A claimed one is never touched.
     */
    async dropUnclaimable(deliveryId: string) {
      await db.query(
        `DELETE FROM deliveries d WHERE d.id = $1 AND d.status = 'queued' AND NOT EXISTS (
           SELECT 1 FROM hooks h JOIN api_keys k ON k.id = h.api_key_id
           WHERE h.id = d.hook_id AND h.deleted_at IS NULL AND k.revoked_at IS NULL)`,
        [deliveryId],
      );
    },

    /** The outcome of a claimed delivery's POST. */
    async record(deliveryId: string, outcome: DeliveryOutcome) {
      await db.query(
        `UPDATE deliveries SET status = $2, response_status = $3, error = $4, duration_ms = $5 WHERE id = $1 AND status = 'sending'`,
        [deliveryId, outcome.status, outcome.responseStatus ?? null, outcome.error ?? null, outcome.durationMs],
      );
    },

    /**
     * Gives a claim back before anything was sent: to `queued` (it waits for its time at the
     * gate, and is claimed again then) or `expired`. Only the claimant calls this.
     */
    async giveBack(deliveryId: string, status: 'queued' | 'expired') {
      await db.query(`UPDATE deliveries SET status = $2, attempted_at = NULL, claim_token = NULL WHERE id = $1 AND status = 'sending'`, [
        deliveryId,
        status,
      ]);
    },

    /** A queued delivery that could not get a slot within DELIVERY_MAX_WAIT: never sent. */
    async expire(deliveryId: string) {
      await db.query(`UPDATE deliveries SET status = 'expired' WHERE id = $1 AND status = 'queued'`, [deliveryId]);
    },

    /**
     * Queued deliveries older than `olderThanMs`, oldest first, from after `cursor`, with what
     * their jobs carry: the relay pages through all of them to restore lost jobs.
     */
    async listQueued(olderThanMs: number, cursor: OutboxCursor | undefined, limit: number) {
      const { rows } = await db.query<QueuedDelivery & { at: string }>(
        `SELECT d.id AS delivery_id, d.queued_at::text AS at, h.account_id, h.target_url, h.max_per_second, d.queued_at
         FROM deliveries d JOIN hooks h ON h.id = d.hook_id
         WHERE d.status = 'queued' AND d.queued_at < clock_timestamp() - make_interval(secs => $1)
           AND (d.queued_at, d.id) > ($2::timestamptz, $3::uuid) ORDER BY d.queued_at, d.id LIMIT $4`,
        [olderThanMs / 1000, cursor?.at ?? '-infinity', cursor?.id ?? NIL_UUID, limit],
      );
      return rows;
    },

    /** Latest deliveries of a hook, newest first. */
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
