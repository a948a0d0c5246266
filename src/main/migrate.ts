import { ConfigError, loadConfig } from '../config.js';
import { DataDirBusyError } from '../storage/dataDirLock.js';
import { openStore } from '../storage/store.js';
import { exitWith } from './runtime.js';

/** `npm run migrate` and the Procfile's release phase: brings the schema up to date, then exits. */
try {
  const { store } = await openStore(loadConfig());
  await store.close();
  process.stdout.write('migrations applied\n');
} catch (error) {
  if (error instanceof ConfigError || error instanceof DataDirBusyError) exitWith(error.message);
  throw error;
}
