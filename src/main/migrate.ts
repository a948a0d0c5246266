import { openStore } from '../storage/store.js';
import { createLogger, runProcess } from './lifecycle.js';

/** `npm run migrate` and the Procfile's release phase: brings the schema up to date, then exits. */
await runProcess(async (config) => {
  const { store } = await openStore(config, createLogger(config, 'migrate'));
  await store.close();
  process.stdout.write('migrations applied\n');
});
