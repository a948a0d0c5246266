
      -- A hook is active, or disabled (its events create no deliveries) until its owner enables it.
      ALTER TABLE hooks ADD COLUMN state text NOT NULL DEFAULT 'active';
      ALTER TABLE hooks ADD COLUMN disabled_reason text;
      ALTER TABLE hooks ADD COLUMN disabled_at timestamptz;
      -- Health, kept current by the statement that records outcomes, so no request reads the log.
      -- failing_since is the claim time of the first failure of the current streak.
      ALTER TABLE hooks ADD COLUMN last_delivered_at timestamptz;
      ALTER TABLE hooks ADD COLUMN last_failed_at timestamptz;
      ALTER TABLE hooks ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0;
      ALTER TABLE hooks ADD COLUMN failing_since timestamptz;
      -- Events not delivered because the hook was disabled, since its last disable.
      ALTER TABLE hooks ADD COLUMN skipped integer NOT NULL DEFAULT 0;

      -- Outcomes per hook, hour and status: last_24h sums at most 24 rows per status of a hook,
      -- however many deliveries it had. Kept a day; gone with its hook.
      CREATE TABLE hook_outcome_hours (
        hook_id uuid NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        status text NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (hook_id, hour, status)
      );
      CREATE INDEX hook_outcome_hours_by_age ON hook_outcome_hours (hour);

      -- The delivery log pages newest first by (queued_at, id), per hook and per account. The
      -- account is copied onto each delivery so its log is one index range, not a merge of hooks.
      ALTER TABLE deliveries ADD COLUMN account_id text;
      UPDATE deliveries d SET account_id = h.account_id FROM hooks h WHERE h.id = d.hook_id;
      ALTER TABLE deliveries ALTER COLUMN account_id SET NOT NULL;
      DROP INDEX deliveries_by_hook;
      CREATE INDEX deliveries_by_hook ON deliveries (hook_id, queued_at DESC, id DESC);
      CREATE INDEX deliveries_by_account ON deliveries (account_id, queued_at DESC, id DESC);
    