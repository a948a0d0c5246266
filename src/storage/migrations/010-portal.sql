
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
    