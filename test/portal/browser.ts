import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's Chromium, which .ci/run installs: Playwright's own browser builds cannot be downloaded here. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether the browser suites run: always under CI (where a missing Chromium then fails them),
 * and wherever Chromium is installed.
 */
export const withChromium = Boolean(process.env.CI) || existsSync(CHROMIUM);

/** Where the browser suites keep their screenshots: CI's artifacts, ignored by git. */
export const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/portal');

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A fresh headless Chromium with a profile of its own, for one suite: a time zone and locale of
 * the test's choosing, so the pages' times can be checked against them. `close` removes it all.
 */
export async function openBrowser(options: { timezoneId: string; locale: string }) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  const profile = mkdtempSync(join(tmpdir(), 'contact-hooks-chromium-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1100, height: 800 },
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Runs axe-core in the page (evaluated through the browser's debugging protocol, which the
 * page's CSP does not govern) and expects no serious or critical violation of WCAG A and AA.
 */
export async function expectAccessible(page: Page, label: string) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> };
      }
    ).axe;
    const results = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return results.violations.map((violation) => ({ id: violation.id, impact: violation.impact, targets: violation.nodes.map((node) => node.target) }));
  });
  expect(
    violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical'),
    label,
  ).toStrictEqual([]);
}

/** Whether the page fits its viewport's width: nothing to scroll sideways (a scrolling table inside is fine). */
export const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
