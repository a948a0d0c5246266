import { defineConfig } from 'vitest/config';

/**
 * Three projects: `unit` (domain, API, storage, CLI, end-to-end delivery), `faults` (crashes,
 * outages, fuzzing) and `zapier` (the Zapier app in integrations/zapier against a real service).
 * `npm test` runs all three; `npm run test:faults` and `npm run test:zapier` one each.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/faults/**'] } },
      { extends: true, test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 120_000 } },
      { extends: true, test: { name: 'zapier', include: ['integrations/zapier/test/**/*.test.ts'] } },
    ],
  },
});
