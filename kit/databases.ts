import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A fresh, empty database on the PostgreSQL server at `adminUrl`, named `<prefix>_<random>`, and
 * a function that drops it (closing whatever connections remain).
 */
export async function createDatabase(adminUrl: string, prefix: string) {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
