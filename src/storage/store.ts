import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { callQueries } from './calls.js';
import { contactQueries } from './contacts.js';
import { openPostgres, type Database } from './database.js';
import { openPglite } from './pglite.js';
import { deliveryQueries } from './deliveries.js';
import { deliveryDetailQueries } from './deliveryDetails.js';
import { eventQueries } from './events.js';
import { hookQueries } from './hooks.js';
import { keyQueries } from './keys.js';
import { migrate } from './migrate.js';
import { partitionQueries } from './partitions.js';
import { portalSessionQueries } from './portalSessions.js';
import { retentionQueries } from './retention.js';
import { sealStoredSecrets } from './secrets.js';
import { testEventQueries } from './testEvents.js';
import { acquireDataDirLock } from './dataDirLock.js';
import { vacuumQueries } from './vacuum.js';

/**
 * The delivery statements due at a moment: a claim before a departure the gate granted, or its
 * giving back, and the reading of a parked delivery whose time has come. Run on `db.ahead()`, so
 * that on PGlite they go ahead of every other statement waiting (pglite.ts); nothing else goes there.
 */
function urgentDeliveryQueries(db: Database): Pick<ReturnType<typeof deliveryQueries>, 'claim' | 'giveBack' | 'find'> {
  return deliveryQueries(db);
}

/** Every query the service runs, grouped by what it is about. The only module that speaks SQL. */
export function createStore(db: Database, onClose: () => void = () => {}) {
  return {
    db,
    keys: keyQueries(db),
    contacts: contactQueries(db),
    hooks: hookQueries(db),
    calls: callQueries(db),
    events: eventQueries(db),
    deliveries: deliveryQueries(db),
    deliveryDetails: deliveryDetailQueries(db),
    testEvents: testEventQueries(db),
    portalSessions: portalSessionQueries(db),
    urgentDeliveries: urgentDeliveryQueries(db.ahead()),
    retention: retentionQueries(db),
    partitions: partitionQueries(db),
    vacuum: vacuumQueries(db),
    ping: () => db.query('SELECT 1').then(() => undefined),
    close: () => db.close().finally(onClose),
  };
}

export type Store = ReturnType<typeof createStore>;

/** Brings the schema up to date, and the signing secrets in line with SECRETS_KEY. */
async function prepare(db: Database, secretsKey: Buffer | undefined) {
  await migrate(db);
  await sealStoredSecrets(db, secretsKey);
}

/**
 * Opens PostgreSQL at DATABASE_URL, or PGlite in DATA_DIR under the directory's lock, and
 * prepares it. Throws DataDirBusyError when another process holds DATA_DIR, and ConfigError when
 * SECRETS_KEY cannot open the stored secrets.
 */
export async function openStore(config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'SECRETS_KEY'>, log: Pick<Logger, 'warn'>) {
  if (config.DATABASE_URL) {
    const db = openPostgres(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, log });
    try {
      await prepare(db, config.SECRETS_KEY);
    } catch (error) {
      await db.close();
      throw error;
    }
    return { store: createStore(db), advertise: (_url: string) => {} };
  }
  const lock = acquireDataDirLock(config.DATA_DIR);
  let db: Database | undefined;
  try {
    db = await openPglite(config.DATA_DIR);
    await prepare(db, config.SECRETS_KEY);
    return { store: createStore(db, lock.release), advertise: lock.advertise };
  } catch (error) {
    await db?.close();
    lock.release();
    throw error;
  }
}
