// scratch: API upsert vs raw driver single statement, pool 50, 50 loops
import pg from 'pg';
import { Pool } from 'undici';
import { openContext } from '../context.js';
import { benchSettings, ENGINE_ENV } from '../settings.js';
import { createCpuMeter } from '../support/cpu.js';
import { startPostgresStack } from '../support/stacks.js';
import { closedLoop } from '../support/load.js';
import { upsertViaApi } from '../support/clients.js';

const settings = benchSettings();
const cpu = createCpuMeter();
const ctx = await openContext(settings, cpu);
try {
  const stack = await startPostgresStack(ctx, { ...ENGINE_ENV, DATABASE_POOL_SIZE: '50' }, { web: 'web', worker: 'worker' }, 0);
  const key = await stack.client.newKey('bench');
  let db = new pg.Pool({ connectionString: ctx.database.url, max: 50 });
  let n = 0;
  const phone = () => `+1415${String(5_000_000 + (n++ % 2000)).padStart(7, '0')}`;
  const raw = () => db.query({ name: 'raw-upsert', text: `INSERT INTO contacts (id, account_id, phone, name, source) VALUES (gen_random_uuid(), 'raw', $1, $2, 'bench') ON CONFLICT (account_id, phone) DO UPDATE SET name = EXCLUDED.name RETURNING id`, values: [phone(), 'Bench'] }).then(() => undefined);
  const pool = new Pool(stack.web.url, { connections: 50, pipelining: 1 });
  const api = () => upsertViaApi(pool, key, phone());
  for (let round = 0; round < 2; round++) {
    db = new pg.Pool({ connectionString: ctx.database.url, max: 50 });
    const r = await closedLoop(50, 4000, raw); await db.end(); await new Promise((res) => setTimeout(res, 1000)); const a = await closedLoop(50, 4000, api);
    console.log('raw', r.perSecond.toFixed(0), 'api', a.perSecond.toFixed(0), 'ratio', (a.perSecond / r.perSecond).toFixed(2), a.errors, a.firstError ?? '');
  }
  await pool.close(); await stack.stop();
} finally { await ctx.close(); }
process.exit(0);
