import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueKey } from '../support/app.js';
import { engines, useTestStore } from '../support/databases.js';
import { newAccount } from '../support/http.js';

/**
 * The claim is the at-most-once guarantee: a queued delivery becomes `sending` for one claimant
 * only. The same claimant asking again (its first answer lost with the connection) gets it back;
 * anyone else never does.
 */
describe.each(engines())('claiming a delivery on %s', (engine) => {
  const t = useTestStore(engine);

  /** A queued delivery of a new event to a new subscription; its id and the hook's. */
  async function queuedDelivery() {
    const accountId = newAccount();
    const key = await issueKey(t.store, accountId);
    const created = await t.store.hooks.create(
      { keyId: key.id, accountId },
      { eventType: 'new_contact', targetUrl: 'https://hooks.example.com/claim', maxPerSecond: null, secret: 'whsec_c2VjcmV0' },
      10,
    );
    if (created.outcome !== 'created') throw new Error(created.outcome);
    const { eventIds } = await t.store.contacts.upsert(accountId, { phone: '+14155550123', fields: {} }, 'crm');
    const [delivery] = await t.store.events.dispatch(eventIds[0]!);
    return { deliveryId: delivery!.delivery_id, hookId: created.hook.id, keyId: key.id };
  }

  it('gives a claim to its claimant again, and to nobody else', async () => {
    const { deliveryId } = await queuedDelivery();
    const [mine, theirs] = [randomUUID(), randomUUID()];
    const first = await t.store.deliveries.claim(deliveryId, mine);
    expect(first).toMatchObject({ target_url: 'https://hooks.example.com/claim' });
    expect(await t.store.deliveries.claim(deliveryId, theirs)).toBeUndefined();
    const again = await t.store.deliveries.claim(deliveryId, mine);
    expect(again?.attempted_at).toStrictEqual(first?.attempted_at);
  });

  it('lets exactly one of many concurrent claimants have it', async () => {
    const { deliveryId } = await queuedDelivery();
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.store.deliveries.claim(deliveryId, randomUUID())));
    expect(answers.filter(Boolean)).toHaveLength(1);
  });

  it('lets the next claimant have a claim given back, and nobody claim under a deleted subscription or a revoked key', async () => {
    const given = await queuedDelivery();
    const mine = randomUUID();
    await t.store.deliveries.claim(given.deliveryId, mine);
    await t.store.deliveries.giveBack(given.deliveryId, 'queued');
    expect(await t.store.deliveries.claim(given.deliveryId, mine)).toBeDefined();

    const unsubscribed = await queuedDelivery();
    await t.store.hooks.deleteGone(unsubscribed.hookId);
    expect(await t.store.deliveries.claim(unsubscribed.deliveryId, randomUUID())).toBeUndefined();

    const revoked = await queuedDelivery();
    await t.store.keys.revoke(revoked.keyId);
    expect(await t.store.deliveries.claim(revoked.deliveryId, randomUUID())).toBeUndefined();
  });
});
