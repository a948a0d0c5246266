-- An event is fanned out only when its recording statement saw a subscription of its account and
-- type (src/storage/events.ts), and then to exactly the ones that statement saw: those whose
-- creating transaction is visible in the snapshot the outbox row keeps. Hooks from before this
-- column read as visible to every event.
ALTER TABLE hooks ADD COLUMN created_tx xid8;
ALTER TABLE hooks ALTER COLUMN created_tx SET DEFAULT pg_current_xact_id();
ALTER TABLE event_outbox ADD COLUMN snapshot pg_snapshot;
