import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const compose = (env: Record<string, string>) =>
  spawnSync('docker-compose', ['config', '--quiet'], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 });

/** Where docker-compose is installed; under CI always, so that a CI machine without it fails. */
const withCompose = Boolean(process.env.CI) || !spawnSync('docker-compose', ['version']).error;
/** Said where the suite does not run, in its title and on stderr, so a skip is never silent. */
const SKIPPED_BECAUSE =
  'skipped: docker-compose is not installed on this machine (apt-get install docker-compose); CI installs it in .ci/run, where this suite must run';
if (!withCompose) console.warn(`test/compose.test.ts ${SKIPPED_BECAUSE}`);

/**
 * docker-compose.yml as Compose reads it: `docker-compose config` checks the file against the
 * Compose schema and resolves it without an engine (this machine has a Docker client but no
 * engine, so the images cannot be built or run here). .ci/run installs docker-compose.
 */
describe.runIf(withCompose)(withCompose ? 'docker-compose.yml' : `docker-compose.yml (${SKIPPED_BECAUSE})`, () => {
  it('passes `docker-compose config` with the one variable it asks for', () => {
    const checked = compose({ INTERNAL_API_TOKEN: 'a-token-for-the-check' });
    expect(checked.error).toBeUndefined();
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });

  it('refuses to start without INTERNAL_API_TOKEN, and says so', () => {
    const checked = compose({});
    expect(checked.status).not.toBe(0);
    expect(checked.stderr).toContain('set INTERNAL_API_TOKEN');
  });
});
