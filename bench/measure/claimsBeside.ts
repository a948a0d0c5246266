/**
 * The claim and the outcome of a grown table against the same statements on a table kept at the
 * smallest size, measured in alternating rounds on the same host at the same minute. Measured
 * minutes apart (the smallest size first, then seeding, then the grown size), the two also
 * drifted with the host: 0.94–1.52× and 1.07–2.15× across runs.
 */
import type { BenchContext } from '../context.js';
import type { GrowthDatabase } from '../support/growthDatabase.js';
import { dayName, queueMeasured } from '../support/partitionSeeding.js';
import { BATCH, measureClaimAndRecord, newCosts, stats, type CostSession, type Stats } from './statementCosts.js';

/** Rounds, each measuring both databases in turn (which goes first alternates). */
const ROUNDS = 20;
/** Batches of each database per round: the first WARM_BATCHES unmeasured (the other database ran meanwhile). */
const BATCHES_PER_ROUND = 12;
const WARM_BATCHES = 2;
/** Where the deliveries measured here are queued: past the hours measureSize's slots take in the newest day. */
const SLOT_HOURS = 12;

export interface Beside {
  claim: { reference: Stats; grown: Stats };
  record: { reference: Stats; grown: Stats };
  referenceRows: number;
}

/**
 * A new subscription of the measured account, for this size's rounds alone: the outcome statement
 * updates its hook's health row once per batch, and a row updated thousands of times before (the
 * grown side's measured hook, at every size) must not weigh on one side only.
 */
async function freshHook(side: GrowthDatabase, index: number) {
  const { rows } = await side.db.query<{ id: string }>(
    `INSERT INTO hooks (id, api_key_id, account_id, event_type, target_url, secret)
     SELECT gen_random_uuid(), api_key_id, account_id, event_type, $2, 'whsec_beside' FROM hooks WHERE id = $1 RETURNING id`,
    [side.hooks.measuredHook, `https://beside.example/${index}`],
  );
  return rows[0]!.id;
}

/** Queues every round's deliveries in `side`'s newest day, vacuumed as measureSize leaves its own. */
async function queueRounds(side: GrowthDatabase, index: number) {
  const newest = side.growth.days.at(-1)!;
  const count = ROUNDS * BATCHES_PER_ROUND * BATCH;
  const ids = await queueMeasured(side.seeders[0]!, side.growth, await freshHook(side, index), newest + (SLOT_HOURS + index) * 3_600_000, count, false);
  await side.admin.query(`VACUUM ANALYZE deliveries_${dayName(newest)}, events_${dayName(newest)}`);
  return ids;
}

/** Claim and outcome medians of `grown` and of `reference`, from the same alternating rounds; `index`: the size's. */
export async function measureClaimsBeside(ctx: BenchContext, reference: GrowthDatabase, grown: GrowthDatabase, index: number): Promise<Beside> {
  const sides: { session: CostSession; ids: string[] }[] = [];
  for (const side of [reference, grown]) {
    sides.push({ session: { ctx, admin: side.admin, traced: side.traced, costs: newCosts() }, ids: await queueRounds(side, index) });
  }
  const perRound = BATCHES_PER_ROUND * BATCH;
  for (let round = 0; round < ROUNDS; round++) {
    for (const { session, ids } of round % 2 === 0 ? sides : [...sides].reverse()) {
      await measureClaimAndRecord(session, ids.slice(round * perRound, (round + 1) * perRound), { warm: WARM_BATCHES, explain: false });
    }
  }
  const [ref, big] = sides.map(({ session }) => session.costs.samples);
  return {
    claim: { reference: stats(ref!.claim), grown: stats(big!.claim) },
    record: { reference: stats(ref!.record), grown: stats(big!.record) },
    referenceRows: reference.growth.fillerRows + reference.growth.measuredRows,
  };
}
