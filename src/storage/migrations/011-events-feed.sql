
      -- The events feed (src/domain/eventFeed.ts) pages in the order of the events' transaction
      -- ids. Events from before this column read as transaction 0: they come first. Set as a
      -- default after the column is added, so that no existing row is rewritten.
      ALTER TABLE events ADD COLUMN tx xid8;
      ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
      DROP INDEX events_by_account;
      CREATE INDEX events_feed ON events (account_id, event_type, (COALESCE(tx, '0'::xid8)), id) WHERE hook_id IS NULL;
    