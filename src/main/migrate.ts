import { resolve } from 'node:path';
import { openStore } from '../storage/store.js';
import { createLogger, runProcess } from './lifecycle.js';

/**
 * `npm run migrate` and the Procfile's release phase: brings the schema up to date, then exits,
 * saying which database it was. Without DATABASE_URL that is PGlite's DATA_DIR on this machine,
 * which on a platform's release dyno is thrown away: the message says so.
 */
await runProcess(async (config) => {
  const { store } = await openStore(config, createLogger(config, 'migrate'));
  await store.close();
  process.stdout.write(
    config.DATABASE_URL
      ? 'migrations applied to the PostgreSQL database at DATABASE_URL\n'
      : `migrations applied to the embedded PGlite database in ${resolve(config.DATA_DIR)} (DATA_DIR), because DATABASE_URL is unset. ` +
          'The web process migrates it at start anyway; on a platform, set DATABASE_URL so that release migrates PostgreSQL.\n',
  );
});
