
      -- Retention deletes old rows in small batches, oldest first; these find them without a scan.
      CREATE INDEX events_by_age ON events (created_at);
      CREATE INDEX calls_by_age ON calls (created_at);
      CREATE INDEX deliveries_by_age ON deliveries (queued_at);
      -- Claims still sending past the delivery timeout, which maintenance marks unknown.
      CREATE INDEX deliveries_sending ON deliveries (attempted_at) WHERE status = 'sending';
      -- Deleted subscriptions and revoked keys go once nothing points at them.
      CREATE INDEX hooks_deleted ON hooks (deleted_at) WHERE deleted_at IS NOT NULL;
      CREATE INDEX hooks_by_any_key ON hooks (api_key_id);
      CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
      -- A deleted subscription signs nothing again: its secret is blanked at deletion from now on.
      UPDATE hooks SET secret = '' WHERE deleted_at IS NOT NULL;
    