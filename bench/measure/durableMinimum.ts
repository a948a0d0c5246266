/**
 * The durable minimum: what any at-most-once sender with an outbox pays at least per delivery,
 * measured on the run's own PostgreSQL server and receiver. Per delivery, over a pg Pool and an
 * undici Pool: an INSERT of the event, an INSERT … ON CONFLICT DO NOTHING claim, the POST, and an
 * UPDATE of the outcome, each its own commit. No queue, no pacing, no HTTP ingest. Driven by
 * `concurrency` closed loops, its rate is what the engine's throughput is divided by; driven
 * open-loop at a rate, its latency is what the engine's latency at that rate is divided by.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Pool } from 'undici';
import type { BenchContext } from '../context.js';
import { callBody } from '../support/clients.js';
import { closedLoop, openLoop } from '../support/load.js';
import { summarize } from '../../kit/statistics.js';
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

/** The durable minimum's tables and pools, and one delivery through them; `close` drops them. */
async function openDurableMinimum(ctx: BenchContext, connections: number) {
  await ctx.sql(SCHEMA);
  await connectionsFree(ctx, connections);
  // No idle timeout: driven open-loop at a low rate, most connections its warm-up opened would
  // idle out together inside the measured window and be opened again under load, a stall (up
  // to 0.7 s) that is the pool's, not the durable minimum's.
  const db = new pg.Pool({ connectionString: ctx.database.url, max: connections, idleTimeoutMillis: 0 });
  const receiver = new Pool(ctx.receiver.url, { connections, connect: { ca: ctx.certificate.cert }, keepAliveTimeout: 60_000 });
  const hookId = randomUUID();
  const deliver = async (path = '/dm') => {
    const eventId = randomUUID();
    const data = callBody(randomUUID());
    await db.query({
      name: 'dm-event',
      text: 'INSERT INTO durable_min_events (id, account_id, event_type, data) VALUES ($1, $2, $3, $4)',
      values: [eventId, 'durable', 'new_conversation', data],
    });
    const claimId = randomUUID();
    const claimed = await db.query({
      name: 'dm-claim',
      text: `INSERT INTO durable_min_claims (id, event_id, hook_id, status) VALUES ($1, $2, $3, 'sending') ON CONFLICT DO NOTHING`,
      values: [claimId, eventId, hookId],
    });
    if (claimed.rowCount !== 1) throw new Error('durable minimum: a fresh claim conflicted');
    const response = await receiver.request({
      path,
      method: 'POST',
      body: `{"event":"new_conversation","data":${data}}`,
      headers: { 'content-type': 'application/json' },
    });
    await response.body.text();
    await db.query({
      name: 'dm-outcome',
      text: `UPDATE durable_min_claims SET status = $2, response_status = $3 WHERE id = $1`,
      values: [claimId, response.statusCode === 200 ? 'delivered' : 'failed', response.statusCode],
    });
  };
  return {
    deliver,
    async close() {
      await receiver.close();
      await db.end();
      await ctx.sql('DROP TABLE durable_min_events, durable_min_claims');
      await ctx.receiver.reset();
    },
  };
}

export async function durableMinimum(ctx: BenchContext, concurrency: number, durationMs: number) {
  const minimum = await openDurableMinimum(ctx, concurrency);
  try {
    await closedLoop(concurrency, ctx.settings.durations.warm / 2, () => minimum.deliver());
    const windows: CpuWindow[] = [];
    const result = await ctx.cpu.metered(windows, () => closedLoop(concurrency, durationMs, () => minimum.deliver()));
    if (result.errors > 0) throw new Error(`durable minimum: ${result.errors} errors, first: ${result.firstError}`);
    ctx.cpu.record('durable minimum (event, claim, POST, outcome; each committed)', windows, result.ops);
    return result;
  } finally {
    await minimum.close();
  }
}

/**
 * The durable minimum's latency, open loop at `rate` over pools of `connections`: from each
 * delivery's scheduled start to its POST's receipt at the receiver, as the service's latency is
 * measured (the POST's key is its conversation id on the `/dm-latency` channel).
 */
export async function durableMinimumLatency(ctx: BenchContext, rate: number, durationMs: number, connections: number) {
  const minimum = await openDurableMinimum(ctx, connections);
  try {
    const channel = '/dm-latency';
    await openLoop(rate, ctx.settings.durations.latencyWarm, () => minimum.deliver(`${channel}-warm`));
    await ctx.receiver.reset();
    const scheduled: number[] = [];
    const loop = await openLoop(rate, durationMs, async (index, scheduledAt) => {
      scheduled[index] = scheduledAt;
      await minimum.deliver(`${channel}/${index}`);
    });
    if (loop.errors > 0) throw new Error(`durable minimum latency: ${loop.errors} errors, first: ${loop.firstError}`);
    const times = await ctx.receiver.times(`${channel}/`);
    const latencies = [...times].map(([key, at]) => at - scheduled[Number(key.slice(channel.length + 1, key.indexOf(' ')))]!);
    if (latencies.length < loop.sent) throw new Error(`durable minimum latency: ${loop.sent - latencies.length} POSTs never arrived`);
    return summarize(latencies);
  } finally {
    await minimum.close();
  }
}
