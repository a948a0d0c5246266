import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../src/storage/pglite.js';
import { MIGRATIONS } from '../src/storage/migrations.js';
import { createPostgresDatabase, engines } from './support/databases.js';

const run = promisify(execFile);
const migrate = (env: Record<string, string>) => run(process.execPath, ['dist/src/main/migrate.js'], { env: { PATH: process.env.PATH ?? '', ...env } });
const latest = Math.max(...MIGRATIONS.map((migration) => migration.version));

/** `npm run migrate` (the Procfile's release phase) as a real process, run twice: the second run is a no-op. */
describe.each(engines())('migrate on %s', (engine) => {
  it('applies every migration once and exits 0', async () => {
    if (engine === 'postgres') {
      const database = await createPostgresDatabase();
      try {
        for (let i = 0; i < 2; i++)
          expect((await migrate({ DATABASE_URL: database.url })).stdout).toBe('migrations applied to the PostgreSQL database at DATABASE_URL\n');
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client.query('SELECT max(version) AS version, count(*)::int AS n FROM schema_migrations');
        await client.end();
        expect(rows[0]).toStrictEqual({ version: latest, n: MIGRATIONS.length });
      } finally {
        await database.drop();
      }
      return;
    }
    const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-migrate-'));
    try {
      // Without DATABASE_URL it says which database it was, and what that means for a release phase.
      for (let i = 0; i < 2; i++) {
        const { stdout } = await migrate({ DATA_DIR: dataDir });
        expect(stdout).toContain(`migrations applied to the embedded PGlite database in ${dataDir} (DATA_DIR), because DATABASE_URL is unset.`);
        expect(stdout).toMatch(/on a platform, set DATABASE_URL so that release migrates PostgreSQL/);
      }
      const db = await openPglite(dataDir);
      const { rows } = await db.query<{ version: number; n: number }>('SELECT max(version) AS version, count(*)::int AS n FROM schema_migrations');
      await db.close();
      expect(rows[0]).toStrictEqual({ version: latest, n: MIGRATIONS.length });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
