
      -- A unique index of a partitioned table must hold its partition key, so deliveries are
      -- unique per (event, hook, queued_at), and queued_at is from now on the event's creation
      -- time: one value per event, so this is the same rule as unique per (event, hook). Events
      -- are partitioned by that same time, so a day's deliveries and their events go together;
      -- a delivery points at its event by (event_id, queued_at), without a foreign key, which a
      -- dropped day would have to check row by row.
      ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
      -- Deliveries still to be sent are claimed with their event's partition: they get its time.
      UPDATE deliveries d SET queued_at = e.created_at FROM events e
      WHERE e.id = d.event_id AND d.status IN ('queued', 'sending');
      -- The keys the partitioned tables will have, so the old tables attach as they are.
      ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id, created_at);
      ALTER TABLE deliveries DROP CONSTRAINT deliveries_pkey, ADD PRIMARY KEY (id, queued_at),
        DROP CONSTRAINT deliveries_event_id_hook_id_key, ADD UNIQUE (event_id, hook_id, queued_at);

      DO $migration$
      DECLARE
        until text := to_char((clock_timestamp() AT TIME ZONE 'UTC')::date + 1, 'YYYYMMDD');
        bound text := quote_literal(to_char((clock_timestamp() AT TIME ZONE 'UTC')::date + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
        old_index text;
      BEGIN
        -- The old tables and their indexes take the names of the partition they become.
        ALTER TABLE events RENAME TO events_before;
        ALTER TABLE deliveries RENAME TO deliveries_before;
        FOR old_index IN SELECT indexname FROM pg_indexes WHERE tablename IN ('events_before', 'deliveries_before') LOOP
          EXECUTE format('ALTER INDEX %I RENAME TO %I', old_index, replace(replace(old_index, 'events', 'events_until_' || until), 'deliveries', 'deliveries_until_' || until));
        END LOOP;

        CREATE TABLE events (
          id uuid NOT NULL,
          account_id text NOT NULL,
          event_type text NOT NULL,
          data json NOT NULL,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          dispatched_at timestamptz,
          PRIMARY KEY (id, created_at)
        ) PARTITION BY RANGE (created_at);
        CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
        CREATE INDEX events_by_account ON events (account_id, event_type, created_at DESC);
        CREATE INDEX events_by_age ON events (created_at);

        CREATE TABLE deliveries (
          LIKE deliveries_before INCLUDING DEFAULTS,
          PRIMARY KEY (id, queued_at),
          UNIQUE (event_id, hook_id, queued_at),
          FOREIGN KEY (hook_id) REFERENCES hooks (id)
        ) PARTITION BY RANGE (queued_at);
        CREATE INDEX deliveries_by_hook ON deliveries (hook_id, queued_at DESC, id DESC);
        CREATE INDEX deliveries_by_account ON deliveries (account_id, queued_at DESC, id DESC);
        CREATE INDEX deliveries_by_age ON deliveries (queued_at);
        CREATE INDEX deliveries_sending ON deliveries (attempted_at) WHERE status = 'sending';
        CREATE INDEX deliveries_overdue ON deliveries (relay_at) WHERE status = 'queued';

        EXECUTE format('ALTER TABLE events_before RENAME TO %I', 'events_until_' || until);
        EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%s)', 'events_until_' || until, bound);
        EXECUTE format('ALTER TABLE deliveries_before RENAME TO %I', 'deliveries_until_' || until);
        EXECUTE format('ALTER TABLE deliveries ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%s)', 'deliveries_until_' || until, bound);
      END
      $migration$;
    