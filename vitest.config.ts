import { defineConfig } from 'vitest/config';

/**
 * Four projects: `unit` (domain, API, storage, CLI, end-to-end delivery), `faults` (crashes,
 * outages, fuzzing), `zapier` (the Zapier app in integrations/zapier against a real service) and
 * `n8n` (the n8n nodes in integrations/n8n inside a real n8n, against a real service).
 * `npm test` runs all four; `npm run test:faults`, `npm run test:zapier` and `npm run test:n8n` one each.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/faults/**', 'test/n8n/**'] } },
      { extends: true, test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 120_000 } },
      { extends: true, test: { name: 'zapier', include: ['integrations/zapier/test/**/*.test.ts'] } },
      // n8n takes a while to start, and its poller runs once a minute.
      { extends: true, test: { name: 'n8n', include: ['test/n8n/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 180_000 } },
    ],
  },
});
