/** `npm run docs:config`: writes docs/configuration.md and .env.example from src/config.ts's schema. */
import { writeFileSync } from 'node:fs';
import { renderConfigurationPage, renderEnvExample } from './configDocs.js';

const root = new URL('../..', import.meta.url); // from dist/scripts
writeFileSync(new URL('docs/configuration.md', root), renderConfigurationPage());
writeFileSync(new URL('.env.example', root), renderEnvExample());
console.log('wrote docs/configuration.md and .env.example');
