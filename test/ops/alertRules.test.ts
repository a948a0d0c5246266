import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALERT_RULES, ALERT_TESTS, alertExpressions, metricNames, panelExpressions } from '../support/opsFiles.js';

const promtool = (...args: string[]) => spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 });

/** Where promtool is installed; under CI always, so that a CI machine without it fails instead of skipping. */
const withPromtool = Boolean(process.env.CI) || !promtool('--version').error;
const SKIPPED_BECAUSE = 'skipped: promtool is not installed (apt-get install prometheus); CI installs it in .ci/run, where this suite must run';
if (!withPromtool) console.warn(`test/ops/alertRules.test.ts ${SKIPPED_BECAUSE}`);

describe.runIf(withPromtool)(withPromtool ? 'the alert rules (promtool)' : `the alert rules (${SKIPPED_BECAUSE})`, () => {
  it('pass `promtool check rules`', () => {
    const checked = promtool('check', 'rules', ALERT_RULES);
    expect(checked.error, 'promtool must be installed').toBeUndefined();
    expect(checked.stdout + checked.stderr).toContain('SUCCESS');
    expect(checked.status).toBe(0);
  });

  it('pass their unit tests (`promtool test rules`)', () => {
    const tested = promtool('test', 'rules', ALERT_TESTS);
    expect(tested.error, 'promtool must be installed').toBeUndefined();
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
  });
});

describe('the alert rules’ unit tests', () => {
  type AlertTest = { alertname: string; exp_alerts?: unknown[] };
  const file = parse(readFileSync(ALERT_TESTS, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] };
  const checks = file.tests.flatMap((test) => test.alert_rule_test ?? []);

  it('see every alert fire, and see it stay quiet', () => {
    for (const alert of alertExpressions().keys()) {
      const of = checks.filter((check) => check.alertname === alert);
      expect(
        of.some((check) => (check.exp_alerts ?? []).length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        of.some((check) => (check.exp_alerts ?? []).length === 0),
        `${alert} stays quiet in a test`,
      ).toBe(true);
    }
  });
});

describe('metric names in PromQL', () => {
  it('are what a query selects, not its functions, labels, windows or keywords', () => {
    const expr =
      'sum by (le, route) (rate(a_bucket{outcome=~"x|y", le!="1"}[$__rate_interval])) / on(instance) group_left b:c offset 5m > bool 1e-3 and absent(d)';
    expect(metricNames(expr).sort()).toEqual(['a_bucket', 'b:c', 'd']);
  });

  it('are found in every alert and every dashboard panel', () => {
    for (const [where, expr] of [...alertExpressions(), ...panelExpressions()]) expect(metricNames(expr), where).not.toEqual([]);
  });
});
