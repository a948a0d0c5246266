// ESLint: typescript-eslint's recommended type-checked rules on the TypeScript (tsconfig.json's
// files), the JavaScript recommended rules on the few JavaScript files. Formatting is Prettier's.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'dist/',
      'data/',
      'bench/results/',
      'test-artifacts/',
      '**/node_modules/',
      'integrations/zapier/build/',
      // The n8n nodes are linted by n8n's own community-node rules on ESLint 9 (their eslint.config.mjs, `npm run n8n:lint`),
      // which ESLint 10 would otherwise pick up for that folder and cannot run.
      'integrations/n8n/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    rules: {
      // An async function with no await is how a Fastify handler or an implementation of an async interface returns its value, and it turns a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore names what is left out on purpose (an unused parameter, a property dropped by a rest pattern).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Promise.all over reports of which some are known at once and some still pending is meant.
      '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
    },
  },
  {
    // Tests and their helpers read JSON answers (light-my-request's and fetch's json() are `any`) and expect() checks
    // their shape; typing each answer would restate the API's schemas in every test.
    files: ['test/**/*.ts', 'integrations/zapier/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The JavaScript files are outside tsconfig.json: no type information, so no type-checked rules.
    files: ['**/*.js', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // CI's report reader is CommonJS, so `node` runs it from any folder without a package.json.
    files: ['.ci/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The Zapier app is CommonJS, as zapier-platform-core loads it.
    files: ['integrations/zapier/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The portal's one script runs in the browser as a classic script.
    files: ['src/api/portal/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
);
