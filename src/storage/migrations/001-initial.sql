
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
    