
      CREATE TABLE event_outbox (
        event_id uuid PRIMARY KEY,
        account_id text NOT NULL,
        event_type text NOT NULL,
        created_at timestamptz NOT NULL,
        -- When the relay adds the event's job again, had no worker fanned it out by then.
        relay_at timestamptz NOT NULL
      );
      INSERT INTO event_outbox (event_id, account_id, event_type, created_at, relay_at)
      SELECT id, account_id, event_type, created_at, clock_timestamp() FROM events WHERE dispatched_at IS NULL;
      DROP INDEX events_undispatched;
      ALTER TABLE events DROP COLUMN dispatched_at;
    