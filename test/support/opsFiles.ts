import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** ops/ at the repository's root: the alert rules and the dashboard operators import. */
export const OPS = join(import.meta.dirname, '../../ops');
export const ALERT_RULES = join(OPS, 'prometheus/alerts.yml');
export const ALERT_TESTS = join(OPS, 'prometheus/alerts.test.yml');
export const DASHBOARD = join(OPS, 'grafana/contact-hooks.json');

/** Every alert's expression, by alert name. */
export function alertExpressions(): Map<string, string> {
  const file = parse(readFileSync(ALERT_RULES, 'utf8')) as { groups: { rules: { alert?: string; record?: string; expr: string }[] }[] };
  return new Map(file.groups.flatMap((group) => group.rules.map((rule) => [rule.alert ?? rule.record ?? '', rule.expr] as const)));
}

interface Panel {
  title: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every panel query of the dashboard (rows' panels included), by panel title. */
export function panelExpressions(): Map<string, string> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const all = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...all(panel.panels ?? [])]);
  return new Map(
    all(dashboard.panels).flatMap((panel) =>
      (panel.targets ?? []).flatMap((target, i) => (target.expr ? [[`${panel.title} #${i + 1}`, target.expr] as const] : [])),
    ),
  );
}

/** PromQL words that are not metric names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, range
 * windows (Grafana's $__rate_interval too) and label lists are taken out, minus function calls
 * (a name before `(`), keywords and numbers.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w:.$])[A-Za-z_:][\w:]*\b(?!\s*\()/g)].map(([name]) => name);
  return [...new Set(names.filter((name) => !KEYWORDS.has(name.toLowerCase())))];
}

/** The sample names of a Prometheus text exposition (a histogram's _bucket, _sum and _count each). */
export function scrapedNames(text: string): Set<string> {
  return new Set(text.split('\n').flatMap((line) => (line.startsWith('#') ? [] : (/^[A-Za-z_:][\w:]*/.exec(line) ?? []))));
}

/** The value of one sample line, `name{labels}` exactly as exposed (labels in prom-client's order). */
export function sampleValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
