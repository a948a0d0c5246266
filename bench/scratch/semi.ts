import { openContext } from '../context.js';
import { benchSettings, ENGINE_ENV } from '../settings.js';
import { createCpuMeter } from '../support/cpu.js';
import { endToEndThroughput } from '../measure/deliveries.js';
import { serviceClient } from '../support/clients.js';
import { memoryOf } from '../support/services.js';
const ctx = await openContext(benchSettings(), createCpuMeter());
try {
  for (const flags of [[], ['--max-semi-space-size=1'], [], ['--max-semi-space-size=1']]) {
    const web = await ctx.services.start('web', { ...ctx.commonEnv, ...ENGINE_ENV, DATA_DIR: ctx.tempDir('semi') }, 'web', flags);
    const client = serviceClient(web.url, ctx.token);
    await client.subscribe(await client.newKey('e'), 'new_conversation', `${ctx.receiver.url}/e`);
    await endToEndThroughput(ctx, web.url, { accountId: 'e', channel: '/e' }, 500);
    const r = await endToEndThroughput(ctx, web.url, { accountId: 'e', channel: '/e' }, 4000);
    console.log(JSON.stringify(flags), r.perSecond.toFixed(0), 'peak', memoryOf(web.pid).peakMiB.toFixed(0));
    await ctx.services.stop(web);
  }
} finally { await ctx.close(); }
process.exit(0);
