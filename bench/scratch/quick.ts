// scratch: durable minimum vs e2e delivery, optionally with cpu profiles (QUICK_PROF=1)
import { openContext } from '../context.js';
import { benchSettings, ENGINE_ENV } from '../settings.js';
import { createCpuMeter } from '../support/cpu.js';
import { startPostgresStack } from '../support/stacks.js';
import { durableMinimum } from '../measure/durableMinimum.js';
import { endToEndThroughput } from '../measure/deliveries.js';

const settings = benchSettings();
const cpu = createCpuMeter();
const ctx = await openContext(settings, cpu);
try {
  const dm = await durableMinimum(ctx, 50, 5000);
  console.log('durable minimum', dm.perSecond.toFixed(0));
  const prof = {};
  const workers = Number(process.env.QUICK_WORKERS ?? 1);
  const stack = await startPostgresStack(ctx, { ...ENGINE_ENV, ...prof }, { web: 'web', worker: 'worker' }, workers);
  const acct = { accountId: 'deliver', channel: '/d' };
  await stack.client.subscribe(await stack.client.newKey(acct.accountId), 'new_conversation', `${ctx.receiver.url}${acct.channel}`);
  await endToEndThroughput(ctx, stack.web.url, acct, 500);
  const n = Number(process.env.QUICK_EVENTS ?? 8000);
  const e2e = await endToEndThroughput(ctx, stack.web.url, acct, n, 'e2e');
  console.log('e2e', e2e.perSecond.toFixed(0), 'ingest', e2e.ingestPerSecond.toFixed(0), 'ratio', (e2e.perSecond / dm.perSecond).toFixed(2), 'dups', e2e.duplicates);
  await stack.stop();
  for (const row of cpu.rows()) console.log(JSON.stringify(row));
} finally {
  await ctx.close();
}
process.exit(0);
