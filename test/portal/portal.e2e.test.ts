import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_EXAMPLES } from '../../src/domain/events.js';
import { waitUntil } from '../support/processes.js';
import { stackModes, startStack } from '../support/stack.js';
import { ARTIFACTS, expectAccessible, fitsWidth, openBrowser, withChromium } from './browser.js';

const TIME_ZONE = 'Asia/Kolkata';

/**
 * The owner's portal end to end in a real browser (Debian's Chromium, driven by playwright-core)
 * against the real service, embedded and in its Procfile shape (web + worker), with a real HTTPS
 * receiver: the eight steps, each page checked by axe-core, at 360 px and on a desktop,
 * with the browser's own time zone, by keyboard where a person would use one.
 */
describe.runIf(withChromium).each(stackModes())('the portal in a browser, %s mode', (mode) => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let page: Page;
  const hooks: Record<'good' | 'bad' | 'make', string> = { good: '', bad: '', make: '' };
  let makeKey: string;
  const elsewhere: string[] = [];
  const cspViolations: string[] = [];

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${mode}-${name}.png`), fullPage: true });

  beforeAll(async () => {
    // Two failures a millisecond apart disable a hook: step 6 has one to enable.
    stack = await startStack({
      mode,
      workers: mode === 'workers' ? 1 : 0,
      env: { HOOK_DISABLE_AFTER: '1ms', HOOK_DISABLE_MIN_FAILURES: '2', LOG_LEVEL: 'warn' },
    });
    stack.answers['/bad'] = () => ({ status: 500 });
    hooks.good = await stack.subscribe('/good');
    hooks.bad = await stack.subscribe('/bad');
    makeKey = await stack.http.newKey('acme', 'make');
    const made = await stack.http.api(makeKey)('POST', '/hooks', { event: 'missed_call', target_url: `${stack.receiver.url}/make` });
    hooks.make = made.body.id;
    // New contacts until the failing hook is disabled: its failures must span the rule's millisecond.
    await waitUntil(
      async () => {
        await stack.newContacts(1);
        return (await stack.api('GET', `/hooks/${hooks.bad}`)).body.state === 'disabled';
      },
      30_000,
      () => 'the failing hook was not disabled',
    );
    await waitUntil(
      async () => stack.received('/good').length >= 1,
      15_000,
      () => 'no delivery reached /good',
    );

    browser = await openBrowser({ timezoneId: TIME_ZONE, locale: 'en-US' });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('request', (request) => void (request.url().startsWith(stack.web.url) || elsewhere.push(request.url())));
    page.on('console', (message) => void (/Content Security Policy/i.test(message.text()) && cspViolations.push(message.text())));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('1-2. mints a link and opens it: the cookie is set, and the home page shows, in the browser’s time zone', async () => {
    const minted = await stack.http.internal('POST', '/accounts/acme/portal-sessions', { capabilities: ['read', 'manage'] });
    expect(minted.status).toBe(201);
    await page.goto(minted.body.url);
    expect(new URL(page.url()).pathname).toBe('/portal');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Keys and subscriptions');
    const cookies = await browser.context.cookies(stack.web.url + '/portal');
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toStrictEqual([['portal_session', true, 'Lax']]);

    // Times: portal.js wrote each <time> in Asia/Kolkata, as the browser's own Intl does.
    const shown = page.locator('time').first();
    const datetime = (await shown.getAttribute('datetime'))!;
    const local = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: TIME_ZONE }).format(new Date(datetime));
    await expect(shown.textContent()).resolves.toBe(local);

    // Keyboard: the first Tab reaches the skip link, which leads to the content.
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    await expectAccessible(page, 'home');
    await shot('1-home');
    await page.setViewportSize({ width: 360, height: 740 });
    await expect(fitsWidth(page)).resolves.toBe(true);
    await shot('1-home-360');
    await page.setViewportSize({ width: 1100, height: 800 });
  });

  it('3. sees a hook with a delivery', async () => {
    await page.locator(`a[href="/portal/hooks/${hooks.good}"]`).first().click();
    await page.waitForURL(`**/portal/hooks/${hooks.good}`);
    await expect(page.locator('table.log tbody tr').first().textContent()).resolves.toContain('delivered');
    await expect(page.locator('svg.chart').count()).resolves.toBe(2);
    await expectAccessible(page, 'hook page');
    await shot('3-hook');
    await page.setViewportSize({ width: 360, height: 740 });
    await expect(fitsWidth(page)).resolves.toBe(true);
    await page.setViewportSize({ width: 1100, height: 800 });
  });

  it('4. filters the failing hook’s log to failed, from the keyboard', async () => {
    await page.goto(`${stack.web.url}/portal/hooks/${hooks.bad}`);
    await page.locator('#status').focus();
    await page.keyboard.press('End'); // the last status, then back up to `failed`
    await page.locator('#status').selectOption('failed');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Filter');
    await page.keyboard.press('Enter');
    await page.waitForURL(/status=failed/);
    const statuses = await page.locator('table.log tbody .status').allTextContents();
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(new Set(statuses)).toStrictEqual(new Set(['failed']));
    await expectAccessible(page, 'filtered log');
    await shot('4-failed');
  });

  it('5. opens a delivery: its envelope, headers without a secret, status and times', async () => {
    await page.locator('table.log tbody a').first().click();
    await page.waitForURL(/\/portal\/deliveries\//);
    await expect(page.locator('.meta').textContent()).resolves.toMatch(/Status\s*failed[\s\S]*Response status\s*500/);
    const body = JSON.parse((await page.locator('pre.code').textContent())!);
    expect(body.event).toBe('new_contact');
    await expect(page.locator('table').textContent()).resolves.toContain('webhook-signature');
    await expectAccessible(page, 'delivery page');
    await shot('5-delivery');
  });

  it('6. enables the disabled hook', async () => {
    await page.goto(`${stack.web.url}/portal/hooks/${hooks.bad}`);
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.waitForURL(/done=enabled/);
    await expect(page.getByRole('status').textContent()).resolves.toContain('enabled');
    expect((await stack.api('GET', `/hooks/${hooks.bad}`)).body.state).toBe('active');
  });

  it('7. sends a test event, which reaches the HTTPS receiver as the catalog’s example and shows in the log as a test', async () => {
    const before = stack.received('/good').length;
    await page.goto(`${stack.web.url}/portal/hooks/${hooks.good}`);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.waitForURL(/done=test_sent/);
    await waitUntil(
      async () => stack.received('/good').length > before,
      15_000,
      () => 'the test event did not arrive',
    );
    const arrived = stack.received('/good').at(-1)!;
    expect(JSON.parse(arrived.body)).toStrictEqual({ event: 'new_contact', data: EVENT_EXAMPLES.new_contact });
    expect(
      stack
        .received('/bad')
        .filter((request) => request.receivedAt >= arrived.receivedAt - 1_000)
        .map((r) => r.body),
    ).not.toContain(arrived.body);
    await waitUntil(
      async () => {
        await page.reload();
        return (await page.locator('table.log tbody tr').first().textContent())!.includes('delivered');
      },
      15_000,
      () => 'the test delivery was not recorded',
    );
    await expect(page.locator('table.log tbody tr').first().textContent()).resolves.toContain('test');
    await shot('7-test');
  });

  it('8. revokes a key after a confirmation that says its subscriptions go with it', async () => {
    await page.goto(`${stack.web.url}/portal`);
    await page.getByRole('link', { name: 'Revoke make…' }).click();
    await expect(page.locator('main').textContent()).resolves.toMatch(/Its 1 subscription will be deleted[\s\S]*missed_call/);
    await expectAccessible(page, 'revoke confirmation');
    await shot('8-confirm');
    await page.getByRole('button', { name: 'Revoke make and delete its subscriptions' }).click();
    await page.waitForURL(/done=revoked/);
    await expect(page.getByRole('status').textContent()).resolves.toContain('revoked');
    expect((await stack.http.api(makeKey)('GET', '/hooks')).status).toBe(401);
    expect((await stack.api('GET', `/hooks/${hooks.good}`)).status).toBe(200);
  });

  it('loads nothing from another host, breaks no CSP rule, and the catalog and refusals pass axe too', async () => {
    await page.goto(`${stack.web.url}/portal/events`);
    await expectAccessible(page, 'event catalog');
    await page.goto(`${stack.web.url}/portal/deliveries/00000000-0000-7000-8000-000000000000`);
    await expectAccessible(page, 'not found page');
    expect(elsewhere).toStrictEqual([]);
    expect(cspViolations).toStrictEqual([]);
  });
});
