/**
 * The durable minimum: what any at-most-once sender with an outbox pays at least per delivery,
 * measured on the run's own PostgreSQL server and receiver. Each of `concurrency` closed loops,
 * over a pg Pool and an undici Pool of that size, does per delivery: an INSERT of the event, an
 * INSERT … ON CONFLICT DO NOTHING claim, the POST, and an UPDATE of the outcome, each its own
 * commit. No queue, no pacing, no HTTP ingest: the engine's figures are divided by this.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { callBody } from '../support/clients.js';
import { closedLoop } from '../support/load.js';
import { waitUntil } from '../../kit/waiting.js';
import type { CpuWindow } from '../support/cpu.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS durable_min_events (
    id uuid PRIMARY KEY, account_id text NOT NULL, event_type text NOT NULL, data json NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp());
  CREATE TABLE IF NOT EXISTS durable_min_claims (
    id uuid PRIMARY KEY, event_id uuid NOT NULL, hook_id uuid NOT NULL, status text NOT NULL,
    response_status integer, attempted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (event_id, hook_id));`;

/**
 * Until the server has `needed` connections free. The stack measured beside the durable minimum
 * stays up, and its pools keep what they opened under load until it has idled for 10 s: with
 * two workers that can be more than the durable minimum's 50 leave of PostgreSQL's 100.
 */
async function connectionsFree(ctx: BenchContext, needed: number) {
  const free = async () => {
    const { rows } = await ctx.sql(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int - count(*)::int AS free
       FROM pg_stat_activity WHERE backend_type = 'client backend'`,
    );
    return (rows[0] as { free: number }).free;
  };
  await waitUntil(async () => (await free()) >= needed, 30_000, `durable minimum: ${needed} PostgreSQL connections not free within 30 s`);
}

export async function durableMinimum(ctx: BenchContext, concurrency: number, durationMs: number) {
  await ctx.sql(SCHEMA);
  await connectionsFree(ctx, concurrency);
  const db = new pg.Pool({ connectionString: ctx.database.url, max: concurrency });
  const receiver = new Pool(ctx.receiver.url, { connections: concurrency, connect: { ca: ctx.certificate.cert }, keepAliveTimeout: 60_000 });
  const hookId = randomUUID();
  const deliver = async () => {
    const eventId = randomUUID();
    const data = callBody(randomUUID());
    await db.query({ name: 'dm-event', text: 'INSERT INTO durable_min_events (id, account_id, event_type, data) VALUES ($1, $2, $3, $4)', values: [eventId, 'durable', 'new_conversation', data] });
    const claimId = randomUUID();
    const claimed = await db.query({
      name: 'dm-claim',
      text: `INSERT INTO durable_min_claims (id, event_id, hook_id, status) VALUES ($1, $2, $3, 'sending') ON CONFLICT DO NOTHING`,
      values: [claimId, eventId, hookId],
    });
    if (claimed.rowCount !== 1) throw new Error('durable minimum: a fresh claim conflicted');
    const response = await receiver.request({ path: '/dm', method: 'POST', body: `{"event":"new_conversation","data":${data}}`, headers: { 'content-type': 'application/json' } });
    await response.body.text();
    await db.query({ name: 'dm-outcome', text: `UPDATE durable_min_claims SET status = $2, response_status = $3 WHERE id = $1`, values: [claimId, response.statusCode === 200 ? 'delivered' : 'failed', response.statusCode] });
  };
  try {
    await closedLoop(concurrency, ctx.settings.durations.warm / 2, deliver);
    const windows: CpuWindow[] = [];
    const result = await ctx.cpu.metered(windows, () => closedLoop(concurrency, durationMs, deliver));
    if (result.errors > 0) throw new Error(`durable minimum: ${result.errors} errors, first: ${result.firstError}`);
    ctx.cpu.record('durable minimum (event, claim, POST, outcome; each committed)', windows, result.ops);
    return result;
  } finally {
    await receiver.close();
    await db.end();
    await ctx.sql('DROP TABLE durable_min_events, durable_min_claims');
    await ctx.receiver.reset();
  }
}
