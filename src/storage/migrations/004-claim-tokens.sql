
      -- Who claimed a delivery: a claim retried after its answer was lost (the connection dropped
      -- as it committed) is recognised as the same claimant's, instead of as someone else's.
      ALTER TABLE deliveries ADD COLUMN claim_token uuid;
    