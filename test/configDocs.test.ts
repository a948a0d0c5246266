import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { documentedSettings, renderConfigurationPage, renderEnvExample } from '../scripts/configDocs.js';
import { configSchema, loadConfig } from '../src/config.js';

/**
 * docs/configuration.md and .env.example are written from the schema in src/config.ts by
 * `npm run docs:config` (scripts/writeConfigDocs.ts): they say what the schema says, or this fails.
 */

const root = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const RUN = 'differs from the schema in src/config.ts: run `npm run docs:config` and commit what it writes';

describe('the configuration documents', () => {
  it('are what the schema generates', () => {
    expect(read('docs/configuration.md'), `docs/configuration.md ${RUN}`).toBe(renderConfigurationPage());
    expect(read('.env.example'), `.env.example ${RUN}`).toBe(renderEnvExample());
  });

  it('name every setting once, each with its default or example', () => {
    const page = read('docs/configuration.md');
    const example = read('.env.example');
    for (const name of Object.keys(configSchema.shape)) {
      expect(page.match(new RegExp(`^\\| \`${name}\` \\|`, 'gm')), name).toHaveLength(1);
      expect(example.match(new RegExp(`^# ${name}=`, 'gm')), name).toHaveLength(1);
    }
  });

  it('show in .env.example only values the schema accepts: uncommented, they all load', () => {
    const assignments = [...read('.env.example').matchAll(/^# ([A-Z_]+)=(.*)$/gm)].map((match) => [match[1]!, match[2]!] as const);
    const config = loadConfig(Object.fromEntries(assignments));
    expect(config.DELIVERY_MAX_WAIT).toBe(86_400_000); // written 24h
    expect(config.HOOK_DISABLE_AFTER).toBe(5 * 86_400_000); // written 5d
  });

  it('cannot be written while a setting has no description: the generator names it', () => {
    const documented = z.string().default('x').meta({ section: 'server', description: 'What it does.' });
    expect(() => documentedSettings(z.object({ DOCUMENTED: documented, NEW_SETTING: z.string().optional() }))).toThrow(
      /NEW_SETTING \(src\/config\.ts\) needs \.meta\(setting\(section, description\)\)/,
    );
    expect(documentedSettings(z.object({ DOCUMENTED: documented }))).toStrictEqual([
      { name: 'DOCUMENTED', section: 'server', description: 'What it does.', literalDefault: 'x', derivedDefault: undefined, example: undefined },
    ]);
  });
});
