import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Pool } from 'undici';
import { sleep } from '../../kit/waiting.js';
import type { BenchContext } from '../context.js';
import { UPSERT_CONNECTIONS, UPSERT_POOL_SIZE, UPSERT_ROUNDS } from '../settings.js';
import { upsertViaApi } from '../support/clients.js';
import type { CpuWindow } from '../support/cpu.js';
import { closedLoop, type LoopResult } from '../support/load.js';

export interface UpsertFigure {
  ops: number;
  seconds: number;
  perSecond: number;
  inserted: number;
  updated: number;
  /** Rate of each measured round. */
  rounds: number[];
  /** CPU ms per operation that other processes used meanwhile. */
  other: number;
}

const emptyFigure = (): UpsertFigure => ({ ops: 0, seconds: 0, perSecond: 0, inserted: 0, updated: 0, rounds: [], other: 0 });

/** What the API's upserts are measured against: something that upserts one phone, opened per window. */
export interface UpsertReference {
  open(): Promise<{ upsert(phone: string): Promise<'inserted' | 'updated'>; close(): Promise<void> }>;
  /** Waited before each of its windows (a pool of the web process's may have to idle down first). */
  pauseMs: number;
}

/** The raw driver's upsert: one statement, one round trip, as a hand-written integration would do it. */
const RAW_UPSERT = `INSERT INTO contacts (id, account_id, phone, name, source) VALUES ($1, $2, $3, $4, 'bench')
  ON CONFLICT (account_id, phone) DO UPDATE SET name = EXCLUDED.name, updated_at = clock_timestamp() RETURNING (xmax = 0) AS inserted`;

/**
 * The raw driver on PostgreSQL: pg with a pool of UPSERT_POOL_SIZE, one INSERT … ON CONFLICT …
 * RETURNING per upsert, opened for its window and closed after: with the web process's pool of
 * the same size that is all of PostgreSQL's 100 connections, so each window first waits a moment
 * for the bench's own connection to be let go (bench/context.ts).
 */
export const rawDriverUpsert = (url: string, accountId: string): UpsertReference => ({
  pauseMs: 1_000,
  async open() {
    const db = new pg.Pool({ connectionString: url, max: UPSERT_POOL_SIZE });
    return {
      async upsert(phone) {
        const { rows } = await db.query({ name: 'raw-upsert', text: RAW_UPSERT, values: [randomUUID(), accountId, phone, `Bench ${phone.slice(-4)}`] });
        return (rows[0] as { inserted: boolean }).inserted ? 'inserted' : 'updated';
      },
      close: () => db.end(),
    };
  },
});

/**
 * Upserts through the API (POST /api/v1/contacts with `key`) and through `reference`, measured
 * in alternating rounds after a warm-up of each, so that a drift in the machine's load hits both
 * alike. Phones are half new, half uniform over the `seeded` ones.
 */
export async function upsertPair(
  ctx: BenchContext,
  webUrl: string,
  key: string,
  reference: UpsertReference,
  seeded: number,
  durationMs: number,
  label: string,
) {
  const pool = new Pool(webUrl, { connections: UPSERT_CONNECTIONS, pipelining: 1 });
  const api = emptyFigure();
  const direct = emptyFigure();
  const viaApi = (tally: boolean) => upsertViaApi(pool, key, ctx.phones.mixedPhone(seeded), tally ? api : undefined);
  const referenceWindow = async (windowMs: number, tally: boolean) => {
    const opened = await reference.open();
    try {
      return await closedLoop(UPSERT_CONNECTIONS, windowMs, async () => {
        const action = await opened.upsert(ctx.phones.mixedPhone(seeded));
        if (tally) direct[action]++;
      });
    } finally {
      await opened.close();
    }
  };
  const apiCpu: CpuWindow[] = [];
  const directCpu: CpuWindow[] = [];
  const add = (into: UpsertFigure, result: LoopResult) => {
    if (result.errors > 0) throw new Error(`${label}: ${result.errors} errors, first: ${result.firstError}`);
    into.ops += result.ops;
    into.seconds += result.seconds;
    into.rounds.push(Math.round(result.perSecond));
  };
  try {
    const { warm } = ctx.settings.durations;
    await closedLoop(UPSERT_CONNECTIONS, warm, () => viaApi(false));
    await sleep(reference.pauseMs);
    await referenceWindow(warm / 2, false);
    const windowMs = Math.round(durationMs / UPSERT_ROUNDS);
    for (let round = 0; round < UPSERT_ROUNDS; round++) {
      add(api, await ctx.cpu.metered(apiCpu, () => closedLoop(UPSERT_CONNECTIONS, windowMs, () => viaApi(true))));
      // The pause before a reference window is not measured: only its closed loop is.
      await sleep(reference.pauseMs);
      add(direct, await ctx.cpu.metered(directCpu, () => referenceWindow(windowMs, true)));
    }
  } finally {
    await pool.close();
  }
  for (const figure of [api, direct]) figure.perSecond = figure.ops / figure.seconds;
  api.other = ctx.cpu.record(`upsert via API (${label})`, apiCpu, api.ops).perOpMs.other ?? 0;
  direct.other = ctx.cpu.record(`upsert, reference (${label})`, directCpu, direct.ops).perOpMs.other ?? 0;
  return { api, direct };
}
