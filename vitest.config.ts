import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (domain, API, storage, CLI, end-to-end delivery) and `faults` (crashes,
 * outages, fuzzing). `npm test` runs both; `npm run test:faults` only the second.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/faults/**'] } },
      { extends: true, test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
