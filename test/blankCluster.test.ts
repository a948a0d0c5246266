import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from './support/client.js';
import { INTERNAL_TOKEN } from './support/app.js';
import { startWeb, stopAllProcesses } from './support/processes.js';

/**
 * A new DATA_DIR starts as a copy of the blank cluster the build made (src/storage/blankCluster.ts),
 * not from an initdb of its own: initdb gives every cluster a new system identifier, the first
 * field of global/pg_control, so a copy is the only way the two can be equal.
 */

const BLANK = join(import.meta.dirname, '../dist/src/storage/blank-cluster/pgdata');
const systemIdentifier = (cluster: string) => readFileSync(join(cluster, 'global/pg_control')).subarray(0, 8).toString('hex');

const dirs: string[] = [];
afterAll(async () => {
  await stopAllProcesses();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-blank-'));
  dirs.push(dir);
  return join(dir, 'data');
};

/** Starts the embedded web process on `dataDir`, upserts a contact, and stops it; the contact's id. */
async function upsertOnce(dataDir: string, phone: string) {
  const web = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN });
  const service = client(web.url);
  const upserted = await service.api(await service.newKey('acme'))('POST', '/contacts', { phone, name: 'Ada' });
  expect(upserted.status).toBe(200);
  expect(upserted.body.action).toBe('inserted');
  expect(await web.stop('SIGTERM')).toBe(0);
  return upserted.body.contact_id as string;
}

describe('a first start on a new DATA_DIR', () => {
  it('finds a blank cluster every user can read: the service may run as another user than the build', () => {
    const unreadable = readdirSync(BLANK, { recursive: true, withFileTypes: true })
      .filter((entry) => {
        const wanted = entry.isDirectory() ? 0o555 : 0o444; // directories must be entered too
        return (statSync(join(entry.parentPath, entry.name)).mode & wanted) !== wanted;
      })
      .map((entry) => join(entry.parentPath, entry.name));
    expect(unreadable).toStrictEqual([]);
  });

  it('copies the blank cluster, serves, and keeps what it stored across a restart', async () => {
    const dataDir = newDataDir();
    const id = await upsertOnce(dataDir, '+14155550101');
    expect(systemIdentifier(dataDir)).toBe(systemIdentifier(BLANK));
    expect(existsSync(join(dataDir, '.blank-cluster'))).toBe(false);

    const web = await startWeb({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: INTERNAL_TOKEN });
    const stored = await client(web.url).internal('GET', `/accounts/acme/contacts/${id}`);
    expect(stored.status).toBe(200);
    expect(stored.body.name).toBe('Ada');
  });

  it('starts over from the blank cluster when a start cut short left part of a copy and no PG_VERSION', async () => {
    const dataDir = newDataDir();
    for (const dir of ['.blank-cluster/base', 'base']) {
      mkdirSync(join(dataDir, dir), { recursive: true });
      writeFileSync(join(dataDir, dir, 'left-over'), 'from a start cut short');
    }
    await upsertOnce(dataDir, '+14155550102');
    expect(existsSync(join(dataDir, 'base/left-over'))).toBe(false);
    expect(existsSync(join(dataDir, '.blank-cluster'))).toBe(false);
    expect(systemIdentifier(dataDir)).toBe(systemIdentifier(BLANK));
  });
});
