import { pino } from 'pino';
/**
 * `npm run bench`: the figures of issue 4, each measured side by side with its reference in
 * the same run. Prints markdown tables and writes bench/results/latest.{json,md}.
 *
 * Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a
 * fresh database is created and dropped) and Redis (BENCH_REDIS_URL, default
 * redis://127.0.0.1:6379; a unique QUEUE_PREFIX whose keys are deleted after).
 * BENCH_SCALE=0.3 shortens every measuring window (for trying changes out).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, Pool, request } from 'undici';
import { contactQueries } from '../src/storage/contacts.js';
import { openPglite, openPostgres, type Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/migrate.js';
import {
  createDatabase,
  insertFillerHooks,
  insertHooks,
  insertKeyRow,
  seedContacts,
  seededPhone,
  type Run,
} from './support/database.js';
import { cpuPerOp, cpuSnapshot, foreignLoad, type CpuSnapshot } from './support/cpu.js';
import { closedLoop, median, monotonicMs, openLoop, summarize, type LoopResult } from './support/load.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { sleep, startService, type Service } from './support/services.js';
import { createCertificate } from './support/tls.js';

// ---------------------------------------------------------------------------------------------
// Settings

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SCALE = Number(process.env.BENCH_SCALE ?? '1');
const ms = (value: number) => Math.max(500, Math.round(value * SCALE));

const UPSERT_CONNECTIONS = 50;
/** openPostgres() opens a pool of 20; the direct reference uses the same. */
const PG_POOL_SIZE = 20;
const DELIVERY_CONCURRENCY = 64;
/** PARALLEL_POSTS_PER_EVENT in src/workers/deliverEvent.ts. */
const FANOUT_PARALLEL = 32;
const FANOUT_HOOKS = 1_000;
/** Alternating API/direct windows per upsert figure. */
const UPSERT_ROUNDS = 3;
const FANOUT_REPS = 3;
const CONTACT_SIZES = (process.env.BENCH_PG_SIZES ?? '1000,100000,1000000').split(',').map(Number);
const PGLITE_CONTACT_SIZES = (process.env.BENCH_PGLITE_SIZES ?? '1000,100000').split(',').map(Number);
const HOOK_SIZES = [10, 1_000, 10_000];
const PGLITE_LATENCY_RATE = 50;

const D = {
  warm: ms(2_000),
  upsert: ms(10_000),
  upsertGrowth: ms(6_000),
  raw: ms(5_000),
  e2eTargetSeconds: 8 * SCALE,
  latency: ms(10_000),
  latencyGrowth: ms(5_000),
  latencyWarm: ms(1_500),
};

const TOKEN = `bench-internal-${randomBytes(12).toString('hex')}`;
const RESULTS_DIR = join(process.cwd(), 'bench', 'results');
const LOG_DIR = join(RESULTS_DIR, 'logs');

// ---------------------------------------------------------------------------------------------
// Results

interface Row {
  figure: string;
  what: string;
  measured: string;
  reference: string;
  ratio: string;
  goal: string;
  result: string;
}
interface GrowthRow {
  dimension: string;
  size: number;
  actualRows: number;
  figure: string;
  value: number;
  unit: string;
  ratioToSmallest: number;
  costRatio: number;
  flat: string;
  other: number;
}
interface MemoryRow {
  process: string;
  idleMiB: number;
  peakMiB: number;
}

const results = {
  startedAt: new Date().toISOString(),
  environment: {} as Record<string, string | number>,
  durationsMs: D,
  settings: {} as Record<string, string | number>,
  figures: {} as Record<string, unknown>,
  rows: [] as Row[],
  growth: [] as GrowthRow[],
  memory: [] as MemoryRow[],
  cpu: [] as typeof cpuTable,
  notes: [] as string[],
  totalSeconds: 0,
};

const fmt = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
const progress = (message: string) => process.stderr.write(`[bench ${fmt((performance.now() - started) / 1000, 0)}s] ${message}\n`);
const started = performance.now();

/** Processes whose CPU is accounted per figure (postgres and redis-server are found by name). */
const cpuGroups: Record<string, number> = { bench: process.pid };
let cpuDatabase: string | undefined;
const cpuTable: { figure: string; ops: number; utilisation: number; perOpMs: Record<string, number> }[] = [];
/** Runs a measured window and adds its CPU snapshots to `windows`. */
async function metered<T>(windows: [CpuSnapshot, CpuSnapshot][], window: () => Promise<T>): Promise<T> {
  const before = cpuSnapshot(cpuGroups, cpuDatabase);
  const result = await window();
  windows.push([before, cpuSnapshot(cpuGroups, cpuDatabase)]);
  return result;
}
function recordCpu(figure: string, windows: [CpuSnapshot, CpuSnapshot][], ops: number) {
  const entry = { figure, ops, ...cpuPerOp(windows, ops) };
  cpuTable.push(entry);
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Clients

const json = { 'content-type': 'application/json' };

async function call(base: string, method: string, path: string, auth: string, body?: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : json) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function newKey(web: Service, accountId: string) {
  const created = await call(web.url, 'POST', `/internal/v1/accounts/${accountId}/keys`, TOKEN, { source: 'bench' });
  return created.key as string;
}

const subscribe = (web: Service, key: string, event: string, target: string) =>
  call(web.url, 'POST', '/api/v1/hooks', key, { event, target_url: target });

let newPhones = 0;
/** A phone no contact has yet: +1 then 10 digits from 2000000000 on (never a seeded +1415 one). */
const newPhone = () => `+1${2_000_000_000 + newPhones++}`;
/** ~50% existing (uniform over the seeded range), ~50% new. */
const mixedPhone = (seeded: number) => (Math.random() < 0.5 ? seededPhone(Math.floor(Math.random() * seeded)) : newPhone());

const callBody = (conversationId: string) =>
  JSON.stringify({
    conversation_id: conversationId,
    channel: 'voice',
    outcome: 'answered',
    spam: false,
    caller_name: 'Bench Caller',
    caller_number: '+14155550100',
    summary: 'Benchmark call: the caller asked about opening hours.',
  });

async function fireCall(pool: Pool, accountId: string, conversationId: string) {
  const response = await pool.request({
    path: `/internal/v1/accounts/${accountId}/calls`,
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, ...json },
    body: callBody(conversationId),
  });
  const text = await response.body.text();
  if (response.statusCode !== 202 || !text.includes('new_conversation')) throw new Error(`call: ${response.statusCode} ${text}`);
}

async function upsertViaApi(pool: Pool, key: string, phone: string, counts?: { inserted: number; updated: number }) {
  const response = await pool.request({
    path: '/api/v1/contacts',
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...json },
    body: JSON.stringify({ phone, name: `Bench ${phone.slice(-4)}` }),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`upsert: ${response.statusCode} ${text}`);
  if (!counts) return;
  if (text.includes('"inserted"')) counts.inserted++;
  else if (text.includes('"updated"')) counts.updated++;
  else throw new Error(`upsert: unexpected ${text}`);
}

/** `total` operations spread over `concurrency` lanes. */
async function runCount(concurrency: number, total: number, operation: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) await operation(next++);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Figure 1: upsert throughput, API vs the store's own upsert through the driver

interface UpsertFigure {
  ops: number;
  errors: number;
  seconds: number;
  perSecond: number;
  inserted: number;
  updated: number;
  rounds: number[];
  /** CPU ms per operation that other processes used meanwhile. */
  other: number;
}

/**
 * The API and the store's own upsert, measured in alternating rounds (API window, direct
 * window, ...) after a warm-up of each, so that a drift in the machine's load hits both alike.
 */
async function upsertPair(web: Service, key: string, db: Database, seeded: number, durationMs: number, rounds: number, label: string) {
  const pool = new Pool(web.url, { connections: UPSERT_CONNECTIONS, pipelining: 1 });
  const contacts = contactQueries(db);
  const figure = (): UpsertFigure => ({ ops: 0, errors: 0, seconds: 0, perSecond: 0, inserted: 0, updated: 0, rounds: [], other: 0 });
  const api = figure();
  const direct = figure();
  const viaApi = (tally: boolean) => upsertViaApi(pool, key, mixedPhone(seeded), tally ? api : undefined);
  const viaStore = async (tally: boolean) => {
    const phone = mixedPhone(seeded);
    const result = await contacts.upsert('bench', { phone, fields: { name: `Bench ${phone.slice(-4)}` } }, 'bench');
    if (tally) direct[result.action === 'inserted' ? 'inserted' : 'updated']++;
  };
  const apiCpu: [CpuSnapshot, CpuSnapshot][] = [];
  const directCpu: [CpuSnapshot, CpuSnapshot][] = [];
  const add = (into: UpsertFigure, result: LoopResult) => {
    into.ops += result.ops;
    into.errors += result.errors;
    into.seconds += result.seconds;
    into.rounds.push(Math.round(result.perSecond));
    if (result.errors > 0) throw new Error(`${label}: ${result.errors} errors, first: ${result.firstError}`);
  };
  try {
    await closedLoop(UPSERT_CONNECTIONS, D.warm, () => viaApi(false));
    await closedLoop(UPSERT_CONNECTIONS, D.warm / 2, () => viaStore(false));
    const windowMs = Math.round(durationMs / rounds);
    for (let round = 0; round < rounds; round++) {
      add(api, await metered(apiCpu, () => closedLoop(UPSERT_CONNECTIONS, windowMs, () => viaApi(true))));
      add(direct, await metered(directCpu, () => closedLoop(UPSERT_CONNECTIONS, windowMs, () => viaStore(true))));
    }
  } finally {
    await pool.close();
  }
  for (const f of [api, direct]) f.perSecond = f.ops / f.seconds;
  api.other = recordCpu(`upsert via API (${label})`, apiCpu, api.ops).perOpMs.other ?? 0;
  direct.other = recordCpu(`upsert direct (${label})`, directCpu, direct.ops).perOpMs.other ?? 0;
  return { api, direct };
}

// ---------------------------------------------------------------------------------------------
// Figures 2-4: deliveries

/** Raw undici request() POSTs of an event-sized body to the receiver, `concurrency` in flight. */
async function rawPostThroughput(receiver: Receiver, ca: string, concurrency: number, durationMs: number) {
  const agent = new Agent({ connect: { ca }, keepAliveTimeout: 60_000 });
  const post = async () => {
    const response = await request(`${receiver.url}/raw`, {
      dispatcher: agent,
      method: 'POST',
      body: JSON.stringify({ event: 'new_conversation', data: { ...JSON.parse(callBody(randomUUID())) } }),
      headers: { ...json, 'user-agent': 'bench-raw' },
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`raw POST: ${response.statusCode}`);
  };
  try {
    await closedLoop(concurrency, D.warm / 2, post);
    const windows: [CpuSnapshot, CpuSnapshot][] = [];
    const result = await metered(windows, () => closedLoop(concurrency, durationMs, post));
    recordCpu('raw POSTs', windows, result.ops);
    return result;
  } finally {
    await agent.close();
    await receiver.reset();
  }
}

/** Raw POSTs at an open-loop rate: the round-trip floor the delivery latency is compared with. */
async function rawPostLatency(receiver: Receiver, ca: string, rate: number, durationMs: number) {
  const agent = new Agent({ connect: { ca }, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  try {
    await openLoop(rate, durationMs, async (_index, scheduledAt) => {
      const response = await request(`${receiver.url}/raw`, {
        dispatcher: agent,
        method: 'POST',
        body: JSON.stringify({ event: 'new_conversation', data: { ...JSON.parse(callBody(randomUUID())) } }),
        headers: json,
      });
      await response.body.text();
      latencies.push(monotonicMs() - scheduledAt);
    });
    return summarize(latencies);
  } finally {
    await agent.close();
    await receiver.reset();
  }
}

/** Time for `total` raw POSTs to distinct paths with `concurrency` in flight (the fan-out reference). */
async function rawPostBatch(receiver: Receiver, ca: string, total: number, concurrency: number) {
  const agent = new Agent({ connect: { ca }, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({ event: 'new_conversation', data: JSON.parse(callBody(randomUUID())) });
  try {
    const t0 = monotonicMs();
    await runCount(concurrency, total, async (index) => {
      const response = await request(`${receiver.url}/rf/${index}`, { dispatcher: agent, method: 'POST', body, headers: json });
      await response.body.text();
    });
    return monotonicMs() - t0;
  } finally {
    await agent.close();
    await receiver.reset();
  }
}

/**
 * End-to-end deliveries per second: `total` calls ingested as fast as 50 connections allow, from
 * the first call sent to the last delivery received.
 */
async function endToEndThroughput(web: Service, receiver: Receiver, accountId: string, total: number, label?: string) {
  await receiver.reset();
  const pool = new Pool(web.url, { connections: UPSERT_CONNECTIONS });
  const before = cpuSnapshot(cpuGroups, cpuDatabase);
  try {
    const t0 = monotonicMs();
    await runCount(UPSERT_CONNECTIONS, total, () => fireCall(pool, accountId, randomUUID()));
    const ingestedAt = monotonicMs();
    const atIngestEnd = await receiver.stats();
    const stats = await receiver.waitForCount(total, 180_000);
    if (stats.count < total) throw new Error(`only ${stats.count} of ${total} deliveries arrived`);
    const seconds = (stats.lastAt - t0) / 1000;
    if (label) recordCpu(label, [[before, cpuSnapshot(cpuGroups, cpuDatabase)]], stats.count);
    return {
      events: total,
      deliveries: stats.count,
      duplicates: stats.duplicates,
      seconds,
      perSecond: stats.count / seconds,
      ingestPerSecond: total / ((ingestedAt - t0) / 1000),
      /** Deliveries still outstanding when the last call was acknowledged. */
      backlogAtIngestEnd: total - atIngestEnd.count,
    };
  } finally {
    await pool.close();
  }
}

/**
 * Open-loop ingestion at `rate`; latency is receipt at the receiver minus the scheduled send,
 * on the monotonic clock the receiver process shares. `fire(i)` sends one event and returns the
 * receiver key (`path id`) its delivery will have.
 */
async function deliveryLatency(
  label: string,
  receiver: Receiver,
  rate: number,
  durationMs: number,
  prefix: string,
  fire: (index: number) => { key: string; sent: Promise<void> },
) {
  // Warm-up at the same rate, unmeasured: a process just started (JIT, pools) is slow at first.
  await receiver.reset();
  const warm = await openLoop(rate, D.latencyWarm, (index) => fire(-1 - index).sent);
  await receiver.waitForCount(warm.sent, 30_000);
  await receiver.reset();
  const windows: [CpuSnapshot, CpuSnapshot][] = [];
  const scheduled = new Map<string, number>();
  const ingest: number[] = [];
  const { loop, stats } = await metered(windows, async () => {
    const loop = await openLoop(rate, durationMs, async (index, scheduledAt) => {
      const { key, sent } = fire(index);
      scheduled.set(key, scheduledAt);
      await sent;
      ingest.push(monotonicMs() - scheduledAt);
    });
    return { loop, stats: await receiver.waitForCount(scheduled.size, 60_000) };
  });
  if (loop.errors > 0) throw new Error(`${loop.errors} ingestion errors, first: ${loop.firstError}`);
  const other = recordCpu(label, windows, scheduled.size).perOpMs.other ?? 0;
  const times = await receiver.times(prefix);
  const latencies: number[] = [];
  let missing = 0;
  for (const [key, at] of scheduled) {
    const receivedAt = times.get(key);
    if (receivedAt === undefined) missing++;
    else latencies.push(receivedAt - at);
  }
  if (missing > 0) throw new Error(`${label}: ${missing} of ${scheduled.size} deliveries never arrived`);
  return { rate, events: scheduled.size, missing, duplicates: stats.duplicates, ...summarize(latencies), ingest: summarize(ingest), other };
}

/** Fan-out: one call to an account with FANOUT_HOOKS subscriptions; time to the first and last delivery. */
async function fanOut(web: Service, receiver: Receiver, accountId: string) {
  await receiver.reset();
  const pool = new Pool(web.url, { connections: 1 });
  try {
    const t0 = monotonicMs();
    await fireCall(pool, accountId, randomUUID());
    const stats = await receiver.waitForCount(FANOUT_HOOKS, 60_000);
    if (stats.count < FANOUT_HOOKS) throw new Error(`fan-out: ${stats.count} of ${FANOUT_HOOKS} delivered`);
    return { firstMs: stats.firstAt - t0, lastMs: stats.lastAt - t0, duplicates: stats.duplicates };
  } finally {
    await pool.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Orchestration

const memory = new Map<string, MemoryRow>();
function recordMemory(label: string, m: { idleMiB: number; peakMiB: number }) {
  const seen = memory.get(label);
  memory.set(label, {
    process: label,
    idleMiB: Math.max(seen?.idleMiB ?? 0, m.idleMiB),
    peakMiB: Math.max(seen?.peakMiB ?? 0, m.peakMiB),
  });
}
const running = new Set<Service>();
async function start(entry: 'web' | 'worker', env: Record<string, string>, label: string) {
  const service = await startService(entry, env, join(LOG_DIR, `${label.replace(/\W+/g, '-')}.log`), label);
  running.add(service);
  cpuGroups[entry] = service.pid;
  return service;
}
async function stop(service: Service) {
  running.delete(service);
  recordMemory(service.role, await service.stop());
}

function growthRows(
  dimension: string,
  figure: string,
  unit: string,
  higherIsBetter: boolean,
  points: { size: number; actualRows: number; value: number; other: number }[],
) {
  const base = points[0]!.value;
  for (const point of points) {
    const ratio = point.value / base;
    const costRatio = higherIsBetter ? base / point.value : ratio;
    results.growth.push({
      dimension,
      size: point.size,
      actualRows: point.actualRows,
      figure,
      value: point.value,
      unit,
      ratioToSmallest: ratio,
      costRatio,
      // Flat: the cost per operation within 30% of the smallest store's (run-to-run noise here is ~10-20%).
      flat: costRatio <= 1.3 ? 'flat' : 'GROWS',
      other: point.other,
    });
  }
}

async function environment(adminUrl: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const version = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? '?';
  const settings = await client.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'max_connections', 'autovacuum')`,
  );
  await client.end();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  const cpu = os.cpus();
  Object.assign(results.environment, {
    node: process.version,
    cores: cpu.length,
    cpu: cpu[0]?.model ?? '?',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    postgres: version,
    postgresSettings: settings.rows.map((row) => `${row.name}=${row.setting}`).join(', '),
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? '?',
  });
}

async function main() {
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  await environment(ADMIN_URL);
  results.settings = {
    upsertConnections: UPSERT_CONNECTIONS,
    pgPoolSize: PG_POOL_SIZE,
    deliveryConcurrency: DELIVERY_CONCURRENCY,
    fanoutParallelPerEvent: FANOUT_PARALLEL,
    logLevel: 'info (to a file)',
    scale: SCALE,
  };
  // Other work on this machine skews every figure: wait (a while) for it to go quiet, and say so.
  const waitIdleMs = Number(process.env.BENCH_WAIT_IDLE_S ?? '180') * 1000;
  const waitStarted = performance.now();
  let foreign = await foreignLoad(cpuGroups, undefined, 2_000);
  while (foreign > 0.1 && performance.now() - waitStarted < waitIdleMs) {
    progress(`other processes use ${fmt(foreign * 100)}% of the CPU; waiting for the machine to go quiet`);
    foreign = await foreignLoad(cpuGroups, undefined, 5_000);
  }
  results.environment.otherLoadAtStart = `${fmt(foreign * 100)}%`;
  if (foreign > 0.1) results.notes.push(`WARNING: other processes used ${fmt(foreign * 100)}% of the CPU when the run started; figures are skewed (see the "other" column).`);
  const certificate = createCertificate();
  const receiver = await startReceiver(certificate);
  cpuGroups.receiver = receiver.pid;
  const prefix = `contact-hooks-bench-${randomBytes(5).toString('hex')}`;
  const database = await createDatabase(ADMIN_URL);
  cpuDatabase = database.name;
  const admin = new pg.Client({ connectionString: database.url });
  const tempDirs: string[] = [certificate.dir];
  let queue: Queue | undefined;
  let direct: Database | undefined;
  try {
    await admin.connect();
    const sql: Run = (text, params) => admin.query(text, params);
    const common = {
      INTERNAL_API_TOKEN: TOKEN,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      DELIVERY_CONCURRENCY: String(DELIVERY_CONCURRENCY),
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      LOG_LEVEL: 'info',
    };
    const pgEnv = { ...common, DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix };

    // ------------------------------------------------------------------ PostgreSQL + Redis
    progress(`PostgreSQL database ${database.name}, Redis prefix ${prefix}, receiver pid ${receiver.pid}`);
    const web = await start('web', pgEnv, 'web (PostgreSQL + Redis)');
    let worker = await start('worker', pgEnv, 'worker (PostgreSQL + Redis)');
    queue = new Queue('events', { connection: { host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) }, prefix });
    const benchKey = await newKey(web, 'bench');
    const deliverKey = await newKey(web, 'deliver');
    const latKey = await newKey(web, 'bench-lat');
    await subscribe(web, deliverKey, 'new_conversation', `${receiver.url}/d`);
    await subscribe(web, latKey, 'new_contact', `${receiver.url}/c`);
    const fillerKeyId = await insertKeyRow(sql, 'filler');
    const liveHooks = async () => Number(((await sql('SELECT count(*)::int AS n FROM hooks WHERE deleted_at IS NULL')).rows[0] as { n: number }).n);
    let fillers = 0;
    const growHooksTo = async (size: number) => {
      const add = size - (await liveHooks());
      if (add > 0) await insertFillerHooks(sql, fillerKeyId, 'deliver', `${receiver.url}/x`, add, fillers);
      fillers += Math.max(0, add);
      await sql('ANALYZE hooks');
      return liveHooks();
    };
    await growHooksTo(HOOK_SIZES[0]!);

    // Figure 2: delivery throughput
    progress(`figure 2: raw POSTs, ${DELIVERY_CONCURRENCY} in flight, ${D.raw} ms`);
    const raw = await rawPostThroughput(receiver, certificate.cert, DELIVERY_CONCURRENCY, D.raw);
    progress(`  raw ${fmt(raw.perSecond)} POST/s`);
    const probe = await endToEndThroughput(web, receiver, 'deliver', 300);
    const e2eEvents = Math.min(20_000, Math.max(1_000, Math.round(probe.perSecond * D.e2eTargetSeconds)));
    progress(`figure 2: end to end, ${e2eEvents} calls (probe: ${fmt(probe.perSecond)}/s)`);
    const e2e = await endToEndThroughput(web, receiver, 'deliver', e2eEvents, 'delivery end to end (calls)');
    progress(`  e2e ${fmt(e2e.perSecond)} deliveries/s, ingestion ${fmt(e2e.ingestPerSecond)}/s`);
    results.figures.deliveryThroughput = { raw, e2e };
    const e2eRatio = e2e.perSecond / raw.perSecond;
    results.rows.push({
      figure: '2',
      what: `Delivery throughput, end to end (calls → web → Redis → 1 worker → HTTPS receiver; ${fmt(e2e.events)} events)`,
      measured: `${fmt(e2e.perSecond)} deliveries/s`,
      reference: `${fmt(raw.perSecond)} raw undici POST/s (${DELIVERY_CONCURRENCY} in flight, ${D.raw / 1000} s)`,
      ratio: fmt(e2eRatio, 2),
      goal: '≥ 0.50',
      result: e2eRatio >= 0.5 ? 'met' : 'MISSED',
    });

    // Figure 2, diagnostic: the delivery stage alone. Events are ingested while the worker is
    // stopped; then one worker drains the backlog with the web process idle.
    await stop(worker);
    await receiver.reset();
    {
      const pool = new Pool(web.url, { connections: UPSERT_CONNECTIONS });
      await runCount(UPSERT_CONNECTIONS, e2eEvents, () => fireCall(pool, 'deliver', randomUUID()));
      await pool.close();
    }
    worker = await start('worker', pgEnv, 'worker (PostgreSQL + Redis)');
    const drainCpu: [CpuSnapshot, CpuSnapshot][] = [];
    const drained = await metered(drainCpu, () => receiver.waitForCount(e2eEvents, 180_000));
    if (drained.count < e2eEvents) throw new Error(`drain: ${drained.count} of ${e2eEvents} delivered`);
    const drainPerSecond = (drained.count - 1) / ((drained.lastAt - drained.firstAt) / 1000);
    recordCpu('delivery stage only (worker drains a backlog)', drainCpu, drained.count);
    progress(`  delivery stage alone: ${fmt(drainPerSecond)} deliveries/s`);
    results.figures.deliveryStageOnly = { events: e2eEvents, perSecond: drainPerSecond, duplicates: drained.duplicates };
    results.rows.push({
      figure: '2 (diagnostic)',
      what: `Delivery stage alone: one worker drains a backlog of ${fmt(e2eEvents)} events, web idle (first to last receipt)`,
      measured: `${fmt(drainPerSecond)} deliveries/s`,
      reference: `${fmt(raw.perSecond)} raw undici POST/s`,
      ratio: fmt(drainPerSecond / raw.perSecond, 2),
      goal: '—',
      result: '—',
    });

    // Figure 3 (and the 10-subscription point of figure 5): latency at half the peak
    const rate = Math.max(10, Math.round(e2e.perSecond / 2));
    const callLatency = (durationMs: number, label: string) =>
      (async () => {
        const pool = new Pool(web.url, { connections: 128 });
        try {
          return await deliveryLatency(`delivery latency, calls at ${rate}/s (${label})`, receiver, rate, durationMs, '/d ', () => {
            const id = randomUUID();
            return { key: `/d ${id}`, sent: fireCall(pool, 'deliver', id) };
          });
        } finally {
          await pool.close();
        }
      })();
    progress(`figure 3: latency at ${rate}/s for ${D.latency} ms`);
    const latency = await callLatency(D.latency, `${HOOK_SIZES[0]} subscriptions`);
    const rawLatency = await rawPostLatency(receiver, certificate.cert, rate, ms(3_000));
    progress(`  p50 ${fmt(latency.p50, 1)} ms, p99 ${fmt(latency.p99, 1)} ms (raw p99 ${fmt(rawLatency.p99, 1)})`);
    results.figures.latency = { service: latency, raw: rawLatency };
    results.rows.push(
      {
        figure: '3',
        what: `Latency ingestion → receipt, p50 (open loop ${rate}/s = half the peak, ${D.latency / 1000} s, ${fmt(latency.n)} events)`,
        measured: `${fmt(latency.p50, 1)} ms`,
        reference: `${fmt(rawLatency.p50, 1)} ms raw POST round trip at ${rate}/s`,
        ratio: fmt(latency.p50 / rawLatency.p50, 1),
        goal: '—',
        result: '—',
      },
      {
        figure: '3',
        what: `Latency ingestion → receipt, p99 (max ${fmt(latency.max, 1)} ms; call POST answered in p50 ${fmt(latency.ingest.p50, 1)} / p99 ${fmt(latency.ingest.p99, 1)} ms)`,
        measured: `${fmt(latency.p99, 1)} ms`,
        reference: `${fmt(rawLatency.p99, 1)} ms raw POST round trip at ${rate}/s`,
        ratio: fmt(latency.p99 / rawLatency.p99, 1),
        goal: '< 50 ms',
        result: latency.p99 < 50 ? 'met' : 'MISSED',
      },
    );

    // Figure 5, subscriptions: delivery latency with 10, 1k, 10k subscriptions in the store
    const hookPoints = [{ size: HOOK_SIZES[0]!, actualRows: await liveHooks(), p50: latency.p50, p99: latency.p99, other: latency.other }];
    for (const size of HOOK_SIZES.slice(1)) {
      const actualRows = await growHooksTo(size);
      progress(`figure 5: latency with ${actualRows} subscriptions`);
      const measured = await callLatency(D.latencyGrowth, `${fmt(actualRows)} subscriptions`);
      hookPoints.push({ size, actualRows, p50: measured.p50, p99: measured.p99, other: measured.other });
    }
    results.figures.hookGrowth = hookPoints;
    growthRows('subscriptions (PostgreSQL)', `delivery latency p50 at ${rate}/s`, 'ms', false, hookPoints.map((p) => ({ ...p, value: p.p50 })));
    growthRows('subscriptions (PostgreSQL)', `delivery latency p99 at ${rate}/s`, 'ms', false, hookPoints.map((p) => ({ ...p, value: p.p99 })));

    // Figure 4: fan-out to 1,000 subscriptions
    const fanKey = await insertKeyRow(sql, 'fanout');
    await insertHooks(sql, fanKey, 'fanout', 'new_conversation', `${receiver.url}/f`, FANOUT_HOOKS);
    await sql('ANALYZE hooks');
    const fans = [];
    const rawFans = [];
    for (let rep = 0; rep < FANOUT_REPS; rep++) {
      fans.push(await fanOut(web, receiver, 'fanout'));
      rawFans.push(await rawPostBatch(receiver, certificate.cert, FANOUT_HOOKS, FANOUT_PARALLEL));
    }
    const fanLast = median(fans.map((f) => f.lastMs));
    const rawFan = median(rawFans);
    progress(`figure 4: fan-out last delivery ${fmt(fanLast)} ms (raw ${fmt(rawFan)} ms)`);
    results.figures.fanOut = { service: fans, raw: rawFans };
    results.rows.push({
      figure: '4',
      what: `Fan-out: 1 event → ${fmt(FANOUT_HOOKS)} subscriptions, ingestion → last delivery (median of ${FANOUT_REPS}: ${fans.map((f) => fmt(f.lastMs)).join(', ')} ms; first after ${fmt(median(fans.map((f) => f.firstMs)), 1)} ms)`,
      measured: `${fmt(fanLast)} ms (${fmt((FANOUT_HOOKS / fanLast) * 1000)} deliveries/s)`,
      reference: `${fmt(rawFan)} ms for ${fmt(FANOUT_HOOKS)} raw POSTs, ${FANOUT_PARALLEL} in flight`,
      ratio: fmt(fanLast / rawFan, 1),
      goal: '—',
      result: '—',
    });

    // Figures 1 and 5 (contacts), PostgreSQL. The worker is stopped while upserts are measured,
    // so the figure is the web process's against the driver's; it runs for the latency part.
    await stop(worker);
    direct = openPostgres(database.url, { max: PG_POOL_SIZE, log: pino({ level: 'warn' }) });
    const contactPoints: { size: number; actualRows: number; api: UpsertFigure; direct: UpsertFigure; p50: number; p99: number; other: number }[] = [];
    let seeded = 0;
    for (const size of CONTACT_SIZES) {
      progress(`seeding contacts to ${fmt(size)}`);
      await seedContacts(sql, 'bench', seeded, size);
      seeded = size;
      await sql('VACUUM ANALYZE contacts');
      await sql('CHECKPOINT');
      const actualRows = Number(((await sql('SELECT count(*)::int AS n FROM contacts')).rows[0] as { n: number }).n);
      const duration = size === CONTACT_SIZES[0] ? D.upsert : D.upsertGrowth;
      progress(`figure 1/5: upserts with ${fmt(actualRows)} contacts, ${duration} ms each`);
      const { api: apiFigure, direct: directFigure } = await upsertPair(web, benchKey, direct, seeded, duration, UPSERT_ROUNDS, `PostgreSQL, ${fmt(actualRows)} contacts`);
      progress(`  API ${fmt(apiFigure.perSecond)}/s, direct ${fmt(directFigure.perSecond)}/s`);
      // The upserts' new_contact events have no subscriber; they are settled here instead of
      // being worked off by the worker during the latency measurement.
      await sql(`UPDATE events SET dispatched_at = clock_timestamp() WHERE dispatched_at IS NULL AND account_id = 'bench'`);
      await queue.drain(true);
      worker = await start('worker', pgEnv, 'worker (PostgreSQL + Redis)');
      const pool = new Pool(web.url, { connections: 128 });
      const contactLatency = await deliveryLatency(`delivery latency, new contacts at ${rate}/s (PostgreSQL, ${fmt(actualRows)} contacts)`, receiver, rate, D.latencyGrowth, '/c ', () => {
        const phone = newPhone();
        return { key: `/c ${phone}`, sent: upsertViaApi(pool, latKey, phone) };
      });
      await pool.close();
      await stop(worker);
      progress(`  new_contact latency p50 ${fmt(contactLatency.p50, 1)} ms, p99 ${fmt(contactLatency.p99, 1)} ms`);
      contactPoints.push({ size, actualRows, api: apiFigure, direct: directFigure, p50: contactLatency.p50, p99: contactLatency.p99, other: contactLatency.other });
    }
    results.figures.contactGrowthPostgres = contactPoints;
    const first = contactPoints[0]!;
    const upsertRatio = first.api.perSecond / first.direct.perSecond;
    results.rows.unshift({
      figure: '1',
      what: `Upsert throughput, PostgreSQL: POST /api/v1/contacts, ${UPSERT_CONNECTIONS} connections, ${fmt(first.actualRows)} contacts, ${D.upsert / 1000} s each in ${UPSERT_ROUNDS} alternating rounds (API ${first.api.rounds.join(' / ')}, direct ${first.direct.rounds.join(' / ')} per s; ${fmt(first.api.inserted)} inserted / ${fmt(first.api.updated)} updated)`,
      measured: `${fmt(first.api.perSecond)} req/s`,
      reference: `${fmt(first.direct.perSecond)} upserts/s: contactQueries(db).upsert via pg Pool(${PG_POOL_SIZE}), ${UPSERT_CONNECTIONS} concurrent`,
      ratio: fmt(upsertRatio, 2),
      goal: '≥ 0.70',
      result: upsertRatio >= 0.7 ? 'met' : 'MISSED',
    });
    growthRows('contacts (PostgreSQL)', `API upserts/s (${UPSERT_CONNECTIONS} conn)`, 'req/s', true, contactPoints.map((p) => ({ ...p, value: p.api.perSecond, other: p.api.other })));
    growthRows('contacts (PostgreSQL)', 'direct store upserts/s', 'upserts/s', true, contactPoints.map((p) => ({ ...p, value: p.direct.perSecond, other: p.direct.other })));
    growthRows('contacts (PostgreSQL)', `new_contact delivery latency p50 at ${rate}/s`, 'ms', false, contactPoints.map((p) => ({ ...p, value: p.p50 })));
    growthRows('contacts (PostgreSQL)', `new_contact delivery latency p99 at ${rate}/s`, 'ms', false, contactPoints.map((p) => ({ ...p, value: p.p99 })));

    await stop(web);
    await direct.close();
    direct = undefined;
    await admin.end();

    // ------------------------------------------------------------------ PGlite (embedded)
    const webDir = mkdtempSync(join(os.tmpdir(), 'bench-pglite-web-'));
    const directDir = mkdtempSync(join(os.tmpdir(), 'bench-pglite-direct-'));
    tempDirs.push(webDir, directDir);
    const liteEnv = { ...common, DATA_DIR: webDir };
    direct = await openPglite(directDir);
    await migrate(direct);
    const directSql: Run = (text, params) => direct!.query(text, params);
    const litePoints: { size: number; actualRows: number; api: UpsertFigure; direct: UpsertFigure; p50: number; p99: number; other: number }[] = [];
    let liteSeeded = 0;
    let liteKeys: { bench: string; lat: string } | undefined;
    for (const size of PGLITE_CONTACT_SIZES) {
      progress(`PGlite: seeding contacts to ${fmt(size)}`);
      const seedStarted = performance.now();
      // The web process holds DATA_DIR while it runs, so its store is seeded between runs.
      const webDb = await openPglite(webDir);
      await migrate(webDb);
      await seedContacts((text, params) => webDb.query(text, params), 'bench', liteSeeded, size);
      await webDb.exec('VACUUM ANALYZE contacts');
      const actualRows = Number(((await webDb.query<{ n: number }>('SELECT count(*)::int AS n FROM contacts')).rows[0]!).n);
      await webDb.close();
      await seedContacts(directSql, 'bench', liteSeeded, size);
      await direct.exec('VACUUM ANALYZE contacts');
      liteSeeded = size;
      progress(`  seeded in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`);
      const liteWeb = await start('web', liteEnv, 'web (PGlite, embedded delivery)');
      if (!liteKeys) {
        liteKeys = { bench: await newKey(liteWeb, 'bench'), lat: await newKey(liteWeb, 'bench-lat') };
        await subscribe(liteWeb, liteKeys.lat, 'new_contact', `${receiver.url}/c`);
      }
      const duration = size === PGLITE_CONTACT_SIZES[0] ? ms(8_000) : D.upsertGrowth;
      progress(`PGlite figure 1/5: upserts with ${fmt(actualRows)} contacts, ${duration} ms each`);
      const { api: apiFigure, direct: directFigure } = await upsertPair(liteWeb, liteKeys.bench, direct, liteSeeded, duration, UPSERT_ROUNDS, `PGlite, ${fmt(actualRows)} contacts`);
      progress(`  API ${fmt(apiFigure.perSecond)}/s, direct ${fmt(directFigure.perSecond)}/s`);
      const pool = new Pool(liteWeb.url, { connections: 64 });
      const latKeyLite = liteKeys.lat;
      const contactLatency = await deliveryLatency(`delivery latency, new contacts at ${PGLITE_LATENCY_RATE}/s (PGlite, ${fmt(actualRows)} contacts)`, receiver, PGLITE_LATENCY_RATE, D.latencyGrowth, '/c ', () => {
        const phone = newPhone();
        return { key: `/c ${phone}`, sent: upsertViaApi(pool, latKeyLite, phone) };
      });
      await pool.close();
      progress(`  new_contact latency p50 ${fmt(contactLatency.p50, 1)} ms, p99 ${fmt(contactLatency.p99, 1)} ms`);
      await stop(liteWeb);
      litePoints.push({ size, actualRows, api: apiFigure, direct: directFigure, p50: contactLatency.p50, p99: contactLatency.p99, other: contactLatency.other });
    }
    await direct.close();
    direct = undefined;
    results.figures.contactGrowthPglite = litePoints;
    const lite = litePoints[0]!;
    const liteRatio = lite.api.perSecond / lite.direct.perSecond;
    results.rows.splice(1, 0, {
      figure: '1',
      what: `Upsert throughput, PGlite (embedded; the web process also runs the in-process delivery job of each new_contact): ${UPSERT_CONNECTIONS} connections, ${fmt(lite.actualRows)} contacts, ${fmt(ms(8_000) / 1000)} s each in ${UPSERT_ROUNDS} rounds (API ${lite.api.rounds.join(' / ')}, direct ${lite.direct.rounds.join(' / ')} per s)`,
      measured: `${fmt(lite.api.perSecond)} req/s`,
      reference: `${fmt(lite.direct.perSecond)} upserts/s: contactQueries(db).upsert on PGlite in-process, ${UPSERT_CONNECTIONS} concurrent`,
      ratio: fmt(liteRatio, 2),
      goal: 'reported',
      result: '—',
    });
    growthRows('contacts (PGlite)', `API upserts/s (${UPSERT_CONNECTIONS} conn)`, 'req/s', true, litePoints.map((p) => ({ ...p, value: p.api.perSecond, other: p.api.other })));
    growthRows('contacts (PGlite)', 'direct store upserts/s', 'upserts/s', true, litePoints.map((p) => ({ ...p, value: p.direct.perSecond, other: p.direct.other })));
    growthRows('contacts (PGlite)', `new_contact delivery latency p50 at ${PGLITE_LATENCY_RATE}/s`, 'ms', false, litePoints.map((p) => ({ ...p, value: p.p50 })));
    growthRows('contacts (PGlite)', `new_contact delivery latency p99 at ${PGLITE_LATENCY_RATE}/s`, 'ms', false, litePoints.map((p) => ({ ...p, value: p.p99 })));
    if (!PGLITE_CONTACT_SIZES.includes(1_000_000)) {
      results.notes.push('PGlite growth stops at 100k contacts: seeding 1M into two PGlite stores would take a large share of the 10-minute budget (BENCH_PGLITE_SIZES=1000,100000,1000000 runs it).');
    }
  } finally {
    for (const service of [...running]) await stop(service).catch(() => {});
    await direct?.close().catch(() => {});
    await admin.end().catch(() => {});
    await queue?.close().catch(() => {});
    await receiver.close();
    await database.drop();
    const redis = new Redis(REDIS_URL);
    let removed = 0;
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) removed += await redis.del(...keys);
    }
    redis.disconnect();
    progress(`cleaned up: database ${database.name} dropped, ${removed} Redis keys deleted`);
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  }
  results.notes.push(
    'Figure 1 (PostgreSQL): the web process runs with REDIS_URL, so each new contact is also enqueued to Redis, as in production; the worker is stopped during the upsert windows (its work is figure 2), and the new_contact events of those upserts, which have no subscriber, are then marked relayed and their jobs drained.',
    'Figure 1 reference: the bench process calls the store\'s own contactQueries(db).upsert (BEGIN / INSERT … ON CONFLICT DO NOTHING / INSERT event, or SELECT … FOR UPDATE / UPDATE / COMMIT) through openPostgres(url, { max: 20 }), the pool the service itself opens, with the same phone mix (uniform over the seeded phones, or new).',
    'Figures 3 and 5: latency is receipt at the receiver (its own process) minus the scheduled send time of the ingesting POST, both on CLOCK_MONOTONIC; open-loop pacing, so a slow response never delays the next send.',
    'Figure 4 reference: the service sends at most 32 POSTs of one event at once (PARALLEL_POSTS_PER_EVENT) through an undici Agent of 16 sockets per origin.',
    'Growth: contacts are seeded with INSERT … SELECT generate_series in one account, then VACUUM ANALYZE and CHECKPOINT (autovacuum is off on this server); subscriptions are other event types of the same account and other accounts\' hooks, inserted directly; only one matches the measured event.',
    `Logs of every process: ${LOG_DIR}.`,
  );
  results.memory = [...memory.values()];
  results.cpu = cpuTable;
  results.totalSeconds = Math.round((performance.now() - started) / 1000);
  report();
}

// ---------------------------------------------------------------------------------------------
// Report

function table(header: string[], rows: string[][]) {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const CPU_COLUMNS = ['web', 'worker', 'postgres', 'redis', 'receiver', 'bench'];

function report() {
  const env = results.environment;
  const lines = [
    `# contact-hooks benchmarks`,
    '',
    `Run ${results.startedAt} · Node ${env.node} · ${env.cores} cores (${env.cpu}) · ${env.memoryGiB} GiB · PostgreSQL ${env.postgres} (${env.postgresSettings}) · Redis ${env.redis} · other processes' CPU at start ${env.otherLoadAtStart} · total ${results.totalSeconds} s`,
    '',
    `Durations: upsert windows ${D.upsert / 1000} s (1k contacts) and ${D.upsertGrowth / 1000} s (growth) after a ${D.warm / 1000} s warm-up; raw POSTs ${D.raw / 1000} s; ` +
      `end-to-end delivery sized for ~${fmt(D.e2eTargetSeconds, 0)} s; latency ${D.latency / 1000} s (growth points ${D.latencyGrowth / 1000} s) after ${D.latencyWarm / 1000} s of unmeasured events at the same rate. ` +
      `Web and worker log at info to a file; RATE_LIMIT_PER_MINUTE=1e9; DELIVERY_CONCURRENCY=${DELIVERY_CONCURRENCY}; everything on 127.0.0.1, load generator and receiver on the same ${env.cores} cores.`,
    '',
    table(
      ['#', 'Figure', 'Measured', 'Reference (same run)', 'Ratio', 'Goal', 'Result'],
      results.rows.map((row) => [row.figure, row.what, row.measured, row.reference, row.ratio, row.goal, row.result]),
    ),
    '',
    '### 5. Growth: cost per operation against store size',
    '',
    table(
      ['Store', 'Size', 'Rows at measurement', 'Figure', 'Value', 'Ratio to smallest', 'Cost per op ÷ smallest', 'Flat? (≤ 1.3)', 'Other processes (CPU ms/op)'],
      results.growth.map((row) => [
        row.dimension,
        fmt(row.size),
        fmt(row.actualRows),
        row.figure,
        `${fmt(row.value, row.unit === 'ms' ? 1 : 0)} ${row.unit}`,
        fmt(row.ratioToSmallest, 2),
        fmt(row.costRatio, 2),
        row.flat,
        fmt(row.other, 2),
      ]),
    ),
    '',
    '### 6. Memory: peak RSS (VmHWM, read before stopping each process; max over its runs)',
    '',
    table(
      ['Process', 'RSS idle after start', 'Peak RSS', 'Peak ÷ idle'],
      results.memory.map((row) => [row.process, `${fmt(row.idleMiB)} MiB`, `${fmt(row.peakMiB)} MiB`, fmt(row.peakMiB / row.idleMiB, 1)]),
    ),
    '',
    '### Where the CPU goes: CPU ms per operation by process during the measured windows',
    '',
    table(
      ['Window', 'Ops', 'Machine busy', ...CPU_COLUMNS, 'Ours', 'Other processes'],
      results.cpu.map((row) => [
        row.figure,
        fmt(row.ops),
        `${fmt(row.utilisation * 100)}%`,
        ...CPU_COLUMNS.map((group) => (row.perOpMs[group] === undefined ? '' : fmt(row.perOpMs[group]!, 3))),
        fmt(CPU_COLUMNS.reduce((sum, group) => sum + (row.perOpMs[group] ?? 0), 0), 3),
        fmt(row.perOpMs.other ?? 0, 3),
      ]),
    ),
    '',
    `"Ours" is the CPU per operation of the processes in the figure; on ${env.cores} cores it bounds the rate at ${env.cores} × 1000 ÷ Ours per second. "Other processes" is CPU the machine spent on anything else meanwhile (other users' test runs skew a figure when it is not near 0).`,
    ...(results.notes.length > 0 ? ['', ...results.notes.map((note) => `- ${note}`)] : []),
    '',
  ];
  const markdown = lines.join('\n');
  process.stdout.write(`${markdown}\n`);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
}

process.on('SIGINT', () => {
  for (const service of running) process.kill(service.pid, 'SIGTERM');
  process.exit(130);
});

await main();
await sleep(0);
process.exit(0);
