/**
 * `node pgliteInitdb.js <dir>`: makes a new PGlite cluster in <dir> and exits, so that the memory
 * initdb leaves behind goes with this process (src/storage/pglite.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_SETTINGS } from './pglite.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: pgliteInitdb.js <data directory>');
const db = await PGlite.create(dir, { postgresqlconf: PGLITE_SETTINGS });
await db.close();
