/**
 * The time of the store's statements as the engine calls them: a worker's claim and outcome of
 * a batch, the relay's scan, and the delivery log's pages. Each is timed call by call from Node
 * (round trip included) after WARM unmeasured calls, and EXPLAINed as sent on its first call.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { summarize } from '../../kit/statistics.js';
import { queuedRange } from '../../src/storage/deliveryIds.js';
import type { Store } from '../../src/storage/store.js';
import type { BenchContext } from '../context.js';
import { DAY, DAYS } from '../support/partitionSeeding.js';
import { explain, explainGeneric, type TracedStore } from './queryPlans.js';

/** Deliveries per claim and per outcome statement (a worker's batch). */
export const BATCH = 50;
/** takeOverdue's batch, as the relay asks. */
export const RELAY_BATCH = 100;
export const LOG_LIMIT = 100;
/** Calls of each statement run before the measured ones (prepared statements, plans, caches). */
export const WARM = 10;
/** A statement whose calls grow slow stops being repeated past this, with at least MIN_SAMPLES measured. */
const BUDGET_MS = 90_000;
const MIN_SAMPLES = 5;
/** Outcomes that never disable the hook. */
const RULE = { afterMs: DAY, minFailures: 1_000_000 };

/** What is measured at each size, in the order of the report. */
export const STATEMENTS = [
  { key: 'claim', what: `claim (batch of ${BATCH} queued)` },
  { key: 'record', what: `outcome (record, batch of ${BATCH})` },
  { key: 'takeOverdue', what: `relay scan (takeOverdue ${RELAY_BATCH})` },
  { key: 'pageHook', what: `log page, hook, newest ${LOG_LIMIT}` },
  { key: 'pageAccount', what: `log page, account, newest ${LOG_LIMIT}` },
  { key: 'pageDay', what: `log page, hook, since/until one day` },
  { key: 'pageDeep', what: `log page, hook, after a cursor ${DAYS / 2} days back` },
] as const;
export type StatementKey = (typeof STATEMENTS)[number]['key'];

export interface Stats {
  n: number;
  medianUs: number;
  meanUs: number;
  p99Us: number;
}

export const stats = (us: number[]): Stats => {
  const s = summarize(us);
  return { n: s.n, medianUs: s.p50, meanUs: us.reduce((a, b) => a + b, 0) / Math.max(1, us.length), p99Us: s.p99 };
};

/** `work`'s result and its time in µs. */
export const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await work();
  return [result, (performance.now() - started) * 1000];
};

/** One size's measurements as they are gathered. */
export interface StatementCosts {
  /** µs of each measured call. */
  samples: Record<StatementKey, number[]>;
  /** Each statement's text as the store sent it. */
  texts: Partial<Record<StatementKey, string>>;
  /** EXPLAIN (ANALYZE, BUFFERS) of each statement, by key (and key + " (generic plan)"). */
  plans: Record<string, string>;
  /** A statement that failed (past the store's query timeout, say): reported as such, the others still measured. */
  failures: Partial<Record<StatementKey, string>>;
}

/** Where the statements are measured: the traced store, a connection of its own for EXPLAIN, and what is gathered. */
export interface CostSession {
  ctx: BenchContext;
  admin: pg.Client;
  traced: TracedStore;
  costs: StatementCosts;
}

export function newCosts(): StatementCosts {
  return {
    samples: { claim: [], record: [], takeOverdue: [], pageHook: [], pageAccount: [], pageDay: [], pageDeep: [] },
    texts: {},
    plans: {},
    failures: {},
  };
}

function failed({ ctx, costs }: CostSession, key: StatementKey, error: unknown) {
  costs.failures[key] = String(error);
  ctx.progress(`  ${key} FAILED: ${String(error)}`);
}

/**
 * Claims `claimIds` (queued, in queued order) batch by batch, then records each batch's outcome,
 * as a worker does. The first `warm` batches are not measured; `explain`: the first batches'
 * statements are EXPLAINed too (once per size is enough).
 */
export async function measureClaimAndRecord(session: CostSession, claimIds: string[], { warm = WARM, explain: explained = true } = {}) {
  const { admin, traced, costs } = session;
  const { store } = traced;
  const batches = Array.from({ length: claimIds.length / BATCH }, (_, i) => claimIds.slice(i * BATCH, (i + 1) * BATCH));
  const outcomes = (batch: string[]) => batch.map((deliveryId) => ({ deliveryId, status: 'delivered' as const, responseStatus: 200, durationMs: 5 }));
  for (const [i, batch] of batches.entries()) {
    const token = randomUUID();
    const [claimed, claimUs] = await timed(() => store.deliveries.claim(batch, token));
    if (claimed.length !== batch.length) throw new Error(`claimed ${claimed.length} of ${batch.length}`);
    if (explained && i === 0) {
      const next = batches[1]!;
      costs.texts.claim = traced.lastQuery().text;
      const nextClaim = { text: traced.lastQuery().text, params: [next, randomUUID(), ...queuedRange(next)] };
      costs.plans.claim = await explain(admin, nextClaim);
      costs.plans['claim (generic plan)'] = await explainGeneric(admin, nextClaim);
    }
    const [, recordUs] = await timed(() => store.deliveries.record(outcomes(batch), RULE));
    if (explained && i === 1) Object.assign(costs.plans, await explainRecord(session, batches[2]!));
    if (i >= warm) {
      costs.samples.claim.push(claimUs);
      costs.samples.record.push(recordUs);
    }
  }
}

/**
 * The plans (as planned for its values, and generic) of the record just sent, for a batch still
 * claimed: `next`, claimed for it in the EXPLAIN's transaction and given back by its rollback.
 */
async function explainRecord({ admin, traced, costs }: CostSession, next: string[]) {
  const recordQuery = traced.lastQuery();
  costs.texts.record = recordQuery.text;
  const params = [...recordQuery.params];
  params[0] = next;
  const [from, to] = queuedRange(next);
  params[params.length - 2] = from;
  params[params.length - 1] = to;
  const claim = { text: `UPDATE deliveries SET status = 'sending', attempted_at = clock_timestamp() WHERE id = ANY($1::uuid[])`, params: [next] };
  const record = { text: recordQuery.text, params };
  return { record: await explain(admin, record, claim), 'record (generic plan)': await explainGeneric(admin, record, claim) };
}

/** The relay's scan, `calls` times (and WARM), over overdue deliveries queued since `queuedSince`. */
export async function measureRelayScan(session: CostSession, calls: number, queuedSince: number) {
  const { admin, traced, costs } = session;
  const started = performance.now();
  try {
    for (let i = 0; i < calls + WARM; i++) {
      if (costs.samples.takeOverdue.length >= MIN_SAMPLES && performance.now() - started > BUDGET_MS) break;
      const [taken, us] = await timed(() => traced.store.deliveries.takeOverdue(RELAY_BATCH, 3_600_000, queuedSince));
      if (taken.length !== RELAY_BATCH) throw new Error(`takeOverdue took ${taken.length}, not ${RELAY_BATCH}`);
      if (i === 0) {
        const last = traced.lastQuery();
        costs.texts.takeOverdue = last.text;
        costs.plans.takeOverdue = await explain(admin, last);
        costs.plans['takeOverdue (generic plan)'] = await explainGeneric(admin, last);
      }
      if (i >= WARM) costs.samples.takeOverdue.push(us);
    }
  } catch (error) {
    failed(session, 'takeOverdue', error);
  }
}

/** Where the log pages read: one filler hook and its account, and a day in the middle of those holding rows. */
export interface PagesRead {
  hookId: string;
  accountId: string;
  middleDay: number;
}

/** A LogPosition's time: PostgreSQL's microsecond text, as the delivery log's cursors carry it. */
const positionText = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

/** The delivery log's pages, `rounds` rounds (and WARM) of each kind. */
export async function measurePages(session: CostSession, rounds: number, { hookId, accountId, middleDay }: PagesRead) {
  const { admin, traced, costs } = session;
  const { store } = traced;
  const pages: [StatementKey, () => ReturnType<Store['deliveries']['page']>][] = [
    ['pageHook', () => store.deliveries.page({ hookId }, { limit: LOG_LIMIT })],
    ['pageAccount', () => store.deliveries.page({ accountId }, { limit: LOG_LIMIT })],
    ['pageDay', () => store.deliveries.page({ hookId }, { limit: LOG_LIMIT, since: new Date(middleDay), until: new Date(middleDay + DAY) })],
    [
      'pageDeep',
      () =>
        store.deliveries.page(
          { hookId },
          { limit: LOG_LIMIT, after: { queuedAt: positionText(middleDay + DAY / 2), id: 'ffffffff-ffff-7fff-bfff-ffffffffffff' } },
        ),
    ],
  ];
  // In turns, so that other work on the machine meanwhile weighs on each kind of page alike.
  const started = performance.now();
  for (let i = 0; i < rounds + WARM; i++) {
    if (i >= WARM + MIN_SAMPLES && performance.now() - started > BUDGET_MS) break;
    for (const [key, page] of pages) {
      if (costs.failures[key]) continue;
      try {
        const [result, us] = await timed(page);
        if (result.rows.length !== LOG_LIMIT) throw new Error(`${key}: ${result.rows.length} rows, not ${LOG_LIMIT}`);
        if (i === 0) {
          const last = traced.lastQuery();
          costs.texts[key] = last.text;
          costs.plans[key] = await explain(admin, last);
          costs.plans[`${key} (generic plan)`] = await explainGeneric(admin, last);
        }
        if (i >= WARM) costs.samples[key].push(us);
      } catch (error) {
        failed(session, key, error);
      }
    }
  }
}
