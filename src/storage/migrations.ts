/**
 * Versioned schema migrations, the same SQL for PostgreSQL and PGlite: one file each under
 * migrations/, named by version and name (`007-day-partitions.sql`), read once, in version order.
 * Append new versions; never edit one that has shipped (migrations/README.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Beside this module: `npm run build` and `npm start` copy the folder into dist/, which tsc does not. */
const FOLDER = new URL('./migrations/', import.meta.url);
/** The version, and the name `schema_migrations` records, with its spaces written as hyphens. */
const FILE_NAME = /^(\d{3})-([a-z0-9-]+)\.sql$/;

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = readdirSync(FOLDER)
  .filter((file) => file.endsWith('.sql'))
  .map((file) => {
    const [, version, name] = FILE_NAME.exec(file) ?? [];
    if (!version || !name) throw new Error(`${fileURLToPath(new URL(file, FOLDER))}: a migration's file is named like 012-its-name.sql`);
    return { version: Number(version), name: name.replaceAll('-', ' '), sql: readFileSync(new URL(file, FOLDER), 'utf8') };
  })
  .sort((a, b) => a.version - b.version);
