/**
 * docs/configuration.md and .env.example, rendered from the settings' schema (src/config.ts): a
 * setting is documented by its `.meta(setting(section, description))` and nothing else.
 * scripts/writeConfigDocs.ts writes them; test/configDocs.test.ts fails when they differ.
 */
import { z } from 'zod';
import { configSchema, SETTING_SECTIONS } from '../src/config.js';

type Section = (typeof SETTING_SECTIONS)[number];

const SECTIONS: Record<Section, { title: string; intro: string }> = {
  server: { title: 'Server', intro: 'The web process and its API.' },
  storage: {
    title: 'Storage',
    intro: 'PostgreSQL when DATABASE_URL is set; otherwise the embedded default, PGlite (PostgreSQL in WebAssembly) in DATA_DIR, for one process.',
  },
  redis: {
    title: 'Redis',
    intro: 'How web processes and workers (`npm run worker`) run apart, to scale out: they meet in Redis, and need DATABASE_URL too.',
  },
  delivery: { title: 'Delivery', intro: 'How deliveries are sent and paced, and when a hook that keeps failing is disabled.' },
  retention: { title: 'Retention', intro: 'How long the stored history is kept.' },
  security: { title: 'Security', intro: 'Who may use the first-party API and the operator pages, and what is kept secret.' },
  operations: { title: 'Operations', intro: 'Logs, metrics and shutdown.' },
};

const settingDoc = z.object({
  section: z.enum(SETTING_SECTIONS),
  description: z.string().min(1),
  default: z.string().optional(),
  example: z.string().optional(),
});

export interface DocumentedSetting {
  name: string;
  section: Section;
  description: string;
  /** As a user writes it, e.g. `24h`; undefined when unset by default. */
  literalDefault?: string;
  /** A default derived from other settings, in words. */
  derivedDefault?: string;
  example?: string;
}

/** Each setting of `schema` with its documentation; throws naming a setting that has none. */
export function documentedSettings(schema: z.ZodObject = configSchema): DocumentedSetting[] {
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const doc = settingDoc.safeParse(field.meta());
    if (!doc.success) throw new Error(`${name} (src/config.ts) needs .meta(setting(section, description)) last in its chain: ${z.prettifyError(doc.error)}`);
    const literalDefault = field instanceof z.ZodDefault || field instanceof z.ZodPrefault ? String(field.def.defaultValue) : undefined;
    const { section, description, default: derivedDefault, example } = doc.data;
    return { name, section, description, literalDefault, derivedDefault, example };
  });
}

const bySection = (settings: DocumentedSetting[]) =>
  SETTING_SECTIONS.map((section) => ({ section, ...SECTIONS[section], settings: settings.filter((setting) => setting.section === section) })).filter(
    (group) => group.settings.length > 0,
  );

const HOW_SET =
  'Every setting is an environment variable, checked once at start: a bad value stops the process with a message naming it. ' +
  'The web, worker and migrate processes and the CLI first read `.env` from the working directory, if there is one; ' +
  'a variable already in the environment wins over the file. Durations are written `500ms`, `30s`, `90m`, `24h` or `5d`; a bare number is seconds.';
const NODE_OWN =
  "Node's own `NODE_EXTRA_CA_CERTS` (a PEM file of extra certificate authorities to trust when delivering) applies too, " +
  'but only from the environment: Node reads it before the process reads `.env`.';

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function renderConfigurationPage(schema: z.ZodObject = configSchema): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from the schema in src/config.ts by `npm run docs:config`: edit the descriptions there, not this file. -->',
    '',
    `${HOW_SET} [\`.env.example\`](../.env.example) lists every setting, commented out at its default.`,
    '',
    NODE_OWN,
  ];
  for (const group of bySection(documentedSettings(schema))) {
    lines.push('', `## ${group.title}`, '', group.intro, '', '| Variable | Default | What it does |', '| --- | --- | --- |');
    for (const setting of group.settings) {
      const shown = setting.literalDefault !== undefined ? `\`${setting.literalDefault}\`` : (setting.derivedDefault ?? 'unset');
      lines.push(`| \`${setting.name}\` | ${cell(shown)} | ${cell(setting.description)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `text` as `# ` comment lines of at most `width` characters, without markdown's backticks. */
function comment(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.replace(/`/g, '').split(' ')) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

export function renderEnvExample(schema: z.ZodObject = configSchema): string {
  const lines = [
    ...comment('Generated from the schema in src/config.ts by `npm run docs:config`; docs/configuration.md says the same at more length.'),
    '#',
    ...comment(`Copy to .env and uncomment what you change. ${HOW_SET}`),
    '#',
    ...comment(NODE_OWN),
  ];
  for (const group of bySection(documentedSettings(schema))) {
    lines.push('', `# ----- ${group.title} -----`, ...comment(group.intro));
    for (const setting of group.settings) {
      const derived = setting.literalDefault === undefined && setting.derivedDefault !== undefined ? ` Default: ${setting.derivedDefault}.` : '';
      lines.push('', ...comment(`${setting.description}${derived}`), `# ${setting.name}=${setting.literalDefault ?? setting.example ?? ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
