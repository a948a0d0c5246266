/**
 * Versioned schema migrations, the same SQL for PostgreSQL and PGlite. Append new versions;
 * never edit one that has shipped.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'initial',
    sql: `
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        account_id text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        source text NOT NULL,
        name text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

      CREATE TABLE contacts (
        id uuid PRIMARY KEY,
        account_id text NOT NULL,
        phone text NOT NULL,
        name text,
        email text,
        source text NOT NULL,
        owner_fields text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (account_id, phone)
      );

      -- Soft-deleted, so the delivery log keeps pointing at what it delivered to.
      CREATE TABLE hooks (
        id uuid PRIMARY KEY,
        api_key_id uuid NOT NULL REFERENCES api_keys (id),
        account_id text NOT NULL,
        event_type text NOT NULL,
        target_url text NOT NULL,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        deleted_at timestamptz
      );
      CREATE INDEX hooks_by_key ON hooks (api_key_id, created_at) WHERE deleted_at IS NULL;
      CREATE INDEX hooks_by_event ON hooks (account_id, event_type, created_at) WHERE deleted_at IS NULL;

      CREATE TABLE calls (
        account_id text NOT NULL,
        conversation_id uuid NOT NULL,
        channel text NOT NULL,
        outcome text NOT NULL,
        spam boolean NOT NULL,
        caller_name text NOT NULL,
        caller_number text NOT NULL,
        summary text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (account_id, conversation_id)
      );

      -- Every fired event, written in the transaction of its cause (its outbox row: migration 9).
      CREATE TABLE events (
        id uuid PRIMARY KEY,
        account_id text NOT NULL,
        event_type text NOT NULL,
        data json NOT NULL, -- json, not jsonb: keeps the key order subscribers see
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        relayed_at timestamptz
      );
      CREATE INDEX events_unrelayed ON events (created_at) WHERE relayed_at IS NULL;
      CREATE INDEX events_by_account ON events (account_id, event_type, created_at DESC);

      -- One row per (event, hook), claimed before the POST: the unique key is the at-most-once guarantee.
      CREATE TABLE deliveries (
        id uuid PRIMARY KEY,
        event_id uuid NOT NULL REFERENCES events (id),
        hook_id uuid NOT NULL REFERENCES hooks (id),
        status text NOT NULL,
        response_status integer,
        error text,
        duration_ms integer,
        attempted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (event_id, hook_id)
      );
      CREATE INDEX deliveries_by_hook ON deliveries (hook_id, attempted_at DESC);
    `,
  },
  {
    version: 2,
    name: 'paced delivery',
    sql: `
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
    `,
  },
  {
    version: 3,
    name: 'retention',
    sql: `
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
    `,
  },
  {
    version: 4,
    name: 'claim tokens',
    sql: `
      -- Who claimed a delivery: a claim retried after its answer was lost (the connection dropped
      -- as it committed) is recognised as the same claimant's, instead of as someone else's.
      ALTER TABLE deliveries ADD COLUMN claim_token uuid;
    `,
  },
  {
    version: 5,
    name: 'overdue deliveries',
    sql: `
      -- When a queued delivery is overdue: the process that queued or parked it should have sent
      -- it by then, so the relay hands it to a worker (it died, or its wake was lost). It replaces
      -- walking every queued delivery: those waiting for a later time are not looked at.
      ALTER TABLE deliveries ADD COLUMN relay_at timestamptz;
      UPDATE deliveries SET relay_at = queued_at WHERE status = 'queued';
      -- Its place in line at its target's gate (in the pacer's clock) while it waits for it: a
      -- delivery the relay hands back keeps its place instead of going to the end of the line.
      ALTER TABLE deliveries ADD COLUMN place double precision;
      DROP INDEX deliveries_queued;
      CREATE INDEX deliveries_overdue ON deliveries (relay_at) WHERE status = 'queued';
    `,
  },
  {
    version: 6,
    name: 'hook health',
    sql: `
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
    `,
  },
  {
    version: 7,
    name: 'day partitions',
    // The tables as they stand become the first partition of each, for everything before
    // tomorrow (UTC); maintenance creates one partition per day from there on
    // (src/storage/partitions.ts), and retention drops whole days. Attaching keeps every row
    // where it is; it builds the new unique indexes on the old rows, once, under this
    // migration's lock: docs/scaling.md says how a large install does that ahead, online.
    sql: `
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
    `,
  },
  {
    version: 8,
    name: 'deliveries found by their key',
    // A delivery is looked up by its key, (id, queued_at), and every delivery of an event has the
    // event's time as queued_at. Given an index on queued_at alone, the planner looks deliveries
    // up by time and then each among all of that moment's, so a claim of an event sent to many
    // subscriptions reads every one of its deliveries. Retention drops whole days; pruning row by row (a
    // retention under a day) reads the newest day or two without it. One index fewer to write
    // per delivery, too.
    sql: `DROP INDEX deliveries_by_age;`,
  },
  {
    version: 9,
    name: 'event outbox',
    // Workers fan events out, so an event is recorded before its deliveries exist. The outbox
    // holds one row per event not yet fanned out, written with the event and deleted by the
    // statement that fans it out: small and short-lived, where marking the events themselves
    // would rewrite every event row and all of its indexes once more.
    sql: `
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
    `,
  },
  {
    version: 10,
    name: 'portal',
    sql: `
      -- The owner's portal (src/api/portal): a session the platform minted for an account. Its
      -- link's token opens it once (link_hash), and the cookie it then sets carries it
      -- (session_hash); both are SHA-256 of 256-bit tokens. Ending an account's sessions deletes them.
      CREATE TABLE portal_sessions (
        id uuid PRIMARY KEY,
        account_id text NOT NULL,
        capabilities text[] NOT NULL,
        link_hash text NOT NULL UNIQUE,
        session_hash text UNIQUE,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        opened_at timestamptz,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX portal_sessions_by_account ON portal_sessions (account_id);
      CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at);

      -- A test event, sent from the portal, names the one subscription it is for; NULL for every
      -- real event, which goes to each subscription of its account and type.
      ALTER TABLE events ADD COLUMN hook_id uuid;
      ALTER TABLE event_outbox ADD COLUMN hook_id uuid;

      -- A hook's charts draw a week of hook_outcome_hours: retention keeps them 8 days from now on.

      -- When a key's latest successful request was, to the minute (src/services/keys.ts).
      ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
    `,
  },
  {
    version: 11,
    name: 'events feed',
    sql: `
      -- The events feed (src/domain/eventFeed.ts) pages in the order of the events' transaction
      -- ids. Events from before this column read as transaction 0: they come first. Set as a
      -- default after the column is added, so that no existing row is rewritten.
      ALTER TABLE events ADD COLUMN tx xid8;
      ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
      DROP INDEX events_by_account;
      CREATE INDEX events_feed ON events (account_id, event_type, (COALESCE(tx, '0'::xid8)), id) WHERE hook_id IS NULL;
    `,
  },
  {
    version: 12,
    name: 'events fanned out to the subscriptions their statement saw',
    sql: `
      -- An event is fanned out only when its recording statement saw a subscription of its
      -- account and type (src/storage/events.ts), and then to exactly the ones that statement
      -- saw: those whose creating transaction is visible in the snapshot the outbox row keeps.
      -- Hooks from before this column read as visible to every event.
      ALTER TABLE hooks ADD COLUMN created_tx xid8;
      ALTER TABLE hooks ALTER COLUMN created_tx SET DEFAULT pg_current_xact_id();
      ALTER TABLE event_outbox ADD COLUMN snapshot pg_snapshot;
    `,
  },
];
