import { Pool } from 'undici';
import { contactQueries } from '../../src/storage/contacts.js';
import type { Database } from '../../src/storage/database.js';
import type { BenchContext } from '../context.js';
import { UPSERT_CONNECTIONS, UPSERT_ROUNDS } from '../settings.js';
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

/**
 * Upserts through the API (POST /api/v1/contacts with `key`) and through the store's own
 * contactQueries(db).upsert, measured in alternating rounds (API window, direct window, ...)
 * after a warm-up of each, so that a drift in the machine's load hits both alike. Phones are
 * half new, half uniform over the `seeded` ones.
 */
export async function upsertPair(ctx: BenchContext, webUrl: string, key: string, db: Database, seeded: number, durationMs: number, label: string) {
  const pool = new Pool(webUrl, { connections: UPSERT_CONNECTIONS, pipelining: 1 });
  const contacts = contactQueries(db);
  const api = emptyFigure();
  const direct = emptyFigure();
  const viaApi = (tally: boolean) => upsertViaApi(pool, key, ctx.phones.mixedPhone(seeded), tally ? api : undefined);
  const viaStore = async (tally: boolean) => {
    const phone = ctx.phones.mixedPhone(seeded);
    const result = await contacts.upsert('bench', { phone, fields: { name: `Bench ${phone.slice(-4)}` } }, 'bench');
    if (tally) direct[result.action === 'inserted' ? 'inserted' : 'updated']++;
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
    await closedLoop(UPSERT_CONNECTIONS, warm / 2, () => viaStore(false));
    const windowMs = Math.round(durationMs / UPSERT_ROUNDS);
    for (let round = 0; round < UPSERT_ROUNDS; round++) {
      add(api, await ctx.cpu.metered(apiCpu, () => closedLoop(UPSERT_CONNECTIONS, windowMs, () => viaApi(true))));
      add(direct, await ctx.cpu.metered(directCpu, () => closedLoop(UPSERT_CONNECTIONS, windowMs, () => viaStore(true))));
    }
  } finally {
    await pool.close();
  }
  for (const figure of [api, direct]) figure.perSecond = figure.ops / figure.seconds;
  api.other = ctx.cpu.record(`upsert via API (${label})`, apiCpu, api.ops).perOpMs.other ?? 0;
  direct.other = ctx.cpu.record(`upsert direct (${label})`, directCpu, direct.ops).perOpMs.other ?? 0;
  return { api, direct };
}
