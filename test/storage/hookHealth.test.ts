import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HookDisableRule } from '../../src/domain/hookHealth.js';
import { storedHook } from '../support/app.js';
import { engines, fanOutOutbox, recordEvents, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

const HOUR = 3_600_000;

/**
 * The auto-disable rule as the outcome statements apply it: a span of failures, at least a
 * number of them, every kind of failure counting (unknown too), and a success or enable ending
 * the streak. Claim times are set in the past here, so spans need no waiting.
 */
describe.each(engines())('hook health and auto-disable in storage on %s', (engine) => {
  const t = useTestStore(engine);

  async function hook() {
    const accountId = newAccount();
    const { hookId, keyId } = await storedHook(t.store, accountId);
    const fire = async (count: number) => {
      await recordEvents(t.db, accountId, count);
      return (await fanOutOutbox(t.store, t.db)).map((delivery) => delivery.id);
    };
    /** Claims `count` new deliveries as if `agoMs` ago, and returns their ids. */
    const claimed = async (count: number, agoMs: number) => {
      const ids = await fire(count);
      await t.store.deliveries.claim(ids, randomUUID());
      await t.db.query(`UPDATE deliveries SET attempted_at = clock_timestamp() - make_interval(secs => $2 / 1000.0) WHERE id = ANY($1::uuid[])`, [ids, agoMs]);
      return ids;
    };
    const record = (ids: string[], status: 'delivered' | 'failed' | 'refused', rule: HookDisableRule) =>
      t.store.deliveries.record(
        ids.map((deliveryId) => ({ deliveryId, status, responseStatus: status === 'refused' ? undefined : status === 'failed' ? 429 : 200, durationMs: 1 })),
        rule,
      );
    const state = async () => (await t.store.hooks.findForKey(keyId, hookId))!;
    return { keyId, accountId, hookId, fire, claimed, record, state };
  }

  const rule = { afterMs: HOUR, minFailures: 3 };

  it('disables once the failures span the rule and are enough, and says which hook it disabled', async () => {
    const h = await hook();
    expect(await h.record(await h.claimed(2, 2 * HOUR), 'failed', rule)).toStrictEqual([]);
    // Enough of them, but within the span: still active.
    expect(await h.record(await h.claimed(1, 2 * HOUR - 60_000), 'refused', rule)).toStrictEqual([]);
    expect((await h.state()).state).toBe('active');
    const disabled = await h.record(await h.claimed(1, 0), 'failed', rule);
    expect(disabled.map((row) => [row.id, row.consecutive_failures])).toStrictEqual([[h.hookId, 4]]);
    expect(await h.state()).toMatchObject({ state: 'disabled', disabled_reason: 'failing', consecutive_failures: 4 });
    // Disabled once: further outcomes report nothing new.
    expect(await h.record(await h.claimed(1, 0), 'failed', rule)).toStrictEqual([]);
  });

  it('spans enough time, but not enough failures: active', async () => {
    const h = await hook();
    await h.record(await h.claimed(1, 2 * HOUR), 'failed', rule);
    await h.record(await h.claimed(1, 0), 'failed', rule);
    expect(await h.state()).toMatchObject({ state: 'active', consecutive_failures: 2 });
  });

  it('starts the streak over at a success, even within one batch', async () => {
    const h = await hook();
    const old = await h.claimed(5, 2 * HOUR);
    const success = await h.claimed(1, HOUR);
    const after = await h.claimed(2, 0);
    // One batch: the failures before the success end with it; those after start the streak.
    await h.record([...old, ...after], 'failed', { afterMs: 1_000 * HOUR, minFailures: 100 });
    await h.record(success, 'delivered', rule);
    expect((await h.state()).consecutive_failures).toBe(0);
    await h.record(await h.claimed(2, 0), 'failed', rule);
    expect(await h.state()).toMatchObject({ state: 'active', consecutive_failures: 2 });
  });

  it('counts an unknown outcome (a claim left sending) as a failure, and can disable on it', async () => {
    const h = await hook();
    await h.record(await h.claimed(2, 3 * HOUR), 'failed', rule);
    await h.claimed(1, 2 * HOUR); // its worker died mid-POST
    const marked = await t.store.retention.markStuckUnknown(HOUR, 100, rule);
    expect(marked.changed).toBeGreaterThanOrEqual(1);
    expect(marked.disabled.map((row) => row.id)).toContain(h.hookId);
    expect(await h.state()).toMatchObject({ state: 'disabled', consecutive_failures: 3 });
    expect((await h.state()).last_24h).toMatchObject({ failed: 2, unknown: 1 });
  });

  it('creates no delivery for a disabled hook, counts its events as skipped, and delivers again once enabled', async () => {
    const h = await hook();
    await h.record(await h.claimed(3, 2 * HOUR), 'failed', rule);
    await h.record(await h.claimed(1, 0), 'failed', rule);
    expect((await h.state()).state).toBe('disabled');

    expect(await h.fire(4)).toStrictEqual([]);
    expect((await h.state()).skipped).toBe(4);

    expect(await t.store.hooks.enable({ keyId: h.keyId }, h.hookId)).toBe(true);
    expect(await h.state()).toMatchObject({ state: 'active', disabled_reason: null, disabled_at: null, consecutive_failures: 0, skipped: 4 });
    expect(await h.fire(2)).toHaveLength(2);
    // The streak started over: one more failure does not disable it.
    await h.record(await h.claimed(1, 0), 'failed', rule);
    expect((await h.state()).state).toBe('active');
  });
});
