
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
    