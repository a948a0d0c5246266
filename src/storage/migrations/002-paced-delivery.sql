
      -- A subscription may ask for a slower (or faster) pace than DELIVERY_RATE_PER_TARGET.
      ALTER TABLE hooks ADD COLUMN max_per_second integer;

      -- Set when the event's deliveries were created (fan-out), not when a queue took it.
      ALTER TABLE events RENAME COLUMN relayed_at TO dispatched_at;
      ALTER INDEX events_unrelayed RENAME TO events_undispatched;

      -- A delivery row now exists from fan-out on: queued (waiting for its slot), then claimed
      -- (sending) just before its POST. attempted_at is the claim, so it is empty while queued.
      ALTER TABLE deliveries ADD COLUMN queued_at timestamptz;
      UPDATE deliveries SET queued_at = attempted_at;
      ALTER TABLE deliveries ALTER COLUMN queued_at SET NOT NULL, ALTER COLUMN queued_at SET DEFAULT clock_timestamp();
      ALTER TABLE deliveries ALTER COLUMN attempted_at DROP NOT NULL, ALTER COLUMN attempted_at DROP DEFAULT;
      DROP INDEX deliveries_by_hook;
      CREATE INDEX deliveries_by_hook ON deliveries (hook_id, queued_at DESC);
      -- What the relay walks to find queued deliveries whose job was lost.
      CREATE INDEX deliveries_queued ON deliveries (queued_at, id) WHERE status = 'queued';
    