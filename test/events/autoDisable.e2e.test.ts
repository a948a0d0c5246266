import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN } from '../support/app.js';
import { freePort, sleep, startProcess, waitUntil } from '../support/processes.js';
import { stackModes, startStack } from '../support/stack.js';

/** Past HOOK_DISABLE_AFTER (2s here): the failures after this pause span the rule. */
const PAST_THE_SPAN_MS = 2_200;
/** Lets deliveries in flight land before asserting that nothing arrived. */
const SETTLE_MS = 500;

/**
 * Auto-disable end to end, in both shapes, against a real HTTPS receiver answering 500: the rule
 * (HOOK_DISABLE_AFTER=2s, HOOK_DISABLE_MIN_FAILURES=3), nothing sent while disabled, the skipped
 * count, enabling by the key holder and by the owner, the streak a success ends, and the metric.
 */
describe.each(stackModes())('auto-disable, %s mode', (mode) => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let metricsUrl: string;
  const status: Record<string, number> = {};

  beforeAll(async () => {
    stack = await startStack({ mode, env: { HOOK_DISABLE_AFTER: '2s', HOOK_DISABLE_MIN_FAILURES: '3', LOG_LEVEL: 'warn' } });
    if (mode === 'workers') {
      const port = await freePort();
      stack.workers.push(startProcess('worker', { ...stack.env, WORKER_METRICS_PORT: String(port) }));
      metricsUrl = `http://127.0.0.1:${port}/metrics`;
    } else {
      metricsUrl = `${stack.web.url}/metrics`;
    }
    for (const path of ['/dead', '/flaky']) stack.answers[path] = () => ({ status: status[path] ?? 200 });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const hook = async (id: string) => {
    const shown = await stack.api('GET', `/hooks/${id}`);
    expect(shown.status).toBe(200);
    return shown.body;
  };
  const until = (what: string, check: () => Promise<boolean>) => waitUntil(check, 15_000, what);
  const disabledCount = async () => {
    const response = await fetch(metricsUrl, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
    const line = (await response.text()).split('\n').find((row) => row.startsWith('webhook_hooks_disabled_total '));
    return Number(line?.split(' ')[1]);
  };

  it('disables a hook failing for the span, sends it nothing while disabled, counts what it skipped, and sends again once enabled', async () => {
    status['/dead'] = 500;
    const id = await stack.subscribe('/dead');
    await stack.newContacts(3);
    await until('three failures recorded', async () => (await hook(id)).health.consecutive_failures === 3);
    // Enough failures, but not yet over the span.
    expect((await hook(id)).state).toBe('active');

    await sleep(PAST_THE_SPAN_MS);
    await stack.newContacts(1);
    await until('disabled', async () => (await hook(id)).state === 'disabled');
    const disabled = await hook(id);
    expect(disabled).toMatchObject({ state: 'disabled', disabled_reason: 'failing', health: { consecutive_failures: 4, skipped: 0 } });
    expect(disabled.disabled_at).toEqual(expect.any(String));
    expect(await disabledCount()).toBe(1);
    // Operators are told at warn by the process that recorded the outcome (pino level 40).
    const recorders = mode === 'embedded' ? [stack.web] : stack.workers;
    await until('the disable logged at warn', async () =>
      recorders.some((process) =>
        process
          .stdout()
          .split('\n')
          .some((line) => line.includes('"level":40') && line.includes(id) && line.includes('hook disabled')),
      ),
    );

    await stack.newContacts(2);
    await until('two events skipped', async () => (await hook(id)).health.skipped === 2);
    await sleep(SETTLE_MS);
    expect(stack.received('/dead')).toHaveLength(4);
    const log = await stack.api('GET', `/hooks/${id}/deliveries`);
    expect(log.body.deliveries.map((row: { status: string }) => row.status)).toStrictEqual(['failed', 'failed', 'failed', 'failed']);
    expect((await hook(id)).health.last_24h).toMatchObject({ failed: 4, delivered: 0 });

    const enabled = await stack.api('POST', `/hooks/${id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ state: 'active', disabled_reason: null, disabled_at: null, health: { consecutive_failures: 0 } });
    status['/dead'] = 200;
    await stack.newContacts(1);
    await until('delivered again', async () => (await hook(id)).health.last_delivered_at !== null);
    expect(stack.received('/dead')).toHaveLength(5);
    expect((await stack.api('DELETE', `/hooks/${id}`)).status).toBe(200);
  });

  it('starts the streak over at a success, and the owner (first-party) enables a hook too', async () => {
    status['/flaky'] = 500;
    const id = await stack.subscribe('/flaky');
    await stack.newContacts(3);
    await until('three failures recorded', async () => (await hook(id)).health.consecutive_failures === 3);
    await sleep(PAST_THE_SPAN_MS);

    status['/flaky'] = 200;
    await stack.newContacts(1);
    await until('the success recorded', async () => (await hook(id)).health.consecutive_failures === 0);

    // Without the reset these would make six failures over more than the span.
    status['/flaky'] = 500;
    await stack.newContacts(3);
    await until('three new failures recorded', async () => (await hook(id)).health.consecutive_failures === 3);
    expect((await hook(id)).state).toBe('active');

    await sleep(PAST_THE_SPAN_MS);
    await stack.newContacts(1);
    await until('disabled', async () => (await hook(id)).state === 'disabled');
    expect(await disabledCount()).toBe(2);

    const owners = await stack.http.internal('GET', '/accounts/acme/hooks');
    expect(owners.body.hooks.find((shown: { id: string }) => shown.id === id)).toMatchObject({ state: 'disabled' });
    const enabled = await stack.http.internal('POST', `/accounts/acme/hooks/${id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id, state: 'active', health: { consecutive_failures: 0 } });
    expect((await stack.http.internal('POST', `/accounts/someone-else/hooks/${id}/enable`)).status).toBe(404);

    const sent = stack.received('/flaky').length;
    await stack.newContacts(1);
    await until('sent again', async () => stack.received('/flaky').length === sent + 1);
  });
});
