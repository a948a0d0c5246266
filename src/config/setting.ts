/**
 * What every setting is made of: its documentation (the section it is listed in, and what it
 * does) and the value shapes more than one concern reads, booleans and durations.
 */
import { z } from 'zod';

/** The sections docs/configuration.md and .env.example group the settings in, in this order. */
export const SETTING_SECTIONS = ['server', 'storage', 'redis', 'delivery', 'retention', 'security', 'operations'] as const;

/**
 * A setting's documentation, kept on its schema (`.meta()`, last in the chain) so that
 * `npm run docs:config` writes docs/configuration.md and .env.example from it. `default` names a
 * default the schema cannot show (derived from another setting); `example` is a value to show
 * for a setting that is unset by default. A duration's default is a `.prefault('24h')`, parsed
 * like a value a user writes, so the documents show it as one would write it.
 */
export const setting = (section: (typeof SETTING_SECTIONS)[number], description: string, more: { default?: string; example?: string } = {}) => ({
  section,
  description,
  ...more,
});

export const boolean = z.enum(['true', 'false', '1', '0', '']).transform((value) => value === 'true' || value === '1');

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration such as `5d`, `24h`, `90m`, `30s` or `500ms`; a bare number is seconds. Parsed to ms. */
export const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)?$/, 'must be a duration such as 24h, 90m, 30s or 500ms')
  .transform((text) => {
    const [, amount, unit] = /^([\d.]+)(ms|s|m|h|d)?$/.exec(text)!;
    return Number(amount) * DURATION_UNITS_MS[(unit ?? 's') as keyof typeof DURATION_UNITS_MS];
  })
  .refine((ms) => ms > 0, 'must be longer than zero');
