import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/support/processes.js';
import { UUID } from '../../../test/support/http.js';
import { app, appError, rejection, run, startServiceAndReceiver, type HookTrigger, type ServiceAndReceiver } from './support.js';

type Item = Record<string, unknown>;

/**
 * The three REST Hook triggers end to end: Zapier's subscribe against the real service, an event
 * fired through the service, the POST a real HTTPS receiver got run through `perform`, then
 * `performList` and unsubscribe.
 */
describe('Zapier REST Hook triggers against the service', () => {
  let env: ServiceAndReceiver;
  let authData: { base_url: string; api_key: string };

  beforeAll(async () => {
    env = await startServiceAndReceiver();
    ({ authData } = await env.connect('acme'));
  });
  afterAll(async () => {
    await env?.close();
  });

  const subscribe = async (trigger: HookTrigger, path: string, auth = authData) => {
    const subscription = (await run(trigger.operation.performSubscribe, { authData: auth, targetUrl: `${env.receiver.url}${path}` })) as Item;
    expect(subscription).toMatchObject({ id: expect.stringMatching(UUID), event_type: trigger.key, target_url: `${env.receiver.url}${path}` });
    // Zapier keeps this as subscribeData; the signing secret is not needed there.
    expect(subscription).not.toHaveProperty('secret');
    return subscription;
  };
  const unsubscribe = (trigger: HookTrigger, subscribeData: Item, auth = authData) =>
    run(trigger.operation.performUnsubscribe, { authData: auth, subscribeData, targetUrl: subscribeData.target_url });
  const listedHookIds = async (auth = authData) => ((await env.http.api(auth.api_key)('GET', '/hooks')).body.hooks as Item[]).map((hook) => hook.id);
  /** The one delivery a path got, through `perform` as Zapier runs it on the incoming POST. */
  const performOnDelivery = async (trigger: HookTrigger, path: string) => {
    await waitUntil(() => env.received(path).length === 1);
    const items = (await run(trigger.operation.perform, { authData, cleanedRequest: env.received(path)[0] })) as Item[];
    expect(items).toHaveLength(1);
    return items[0]!;
  };
  const listed = async (trigger: HookTrigger) => (await run(trigger.operation.performList, { authData, meta: { isLoadingSample: true } })) as Item[];

  it('new_contact: a contact created by the action reaches the hook, and perform and performList give the same item', async () => {
    const trigger = app.triggers.new_contact;
    await subscribe(trigger, '/new_contact');
    const created = (await run(app.creates.create_or_update_contact.operation.perform, {
      authData,
      inputData: { phone: '(415) 555-0142', name: 'Ann Lee', email: 'ann@example.com' },
    })) as Item;

    const item = await performOnDelivery(trigger, '/new_contact');
    expect(item).toStrictEqual({ id: created.contact_id, contact_id: created.contact_id, name: 'Ann Lee', phone: '+14155550142', source: 'zapier' });
    expect(Object.keys(item)).toStrictEqual(Object.keys(trigger.operation.sample));
    expect((await listed(trigger)).find((recent) => recent.id === item.id)).toStrictEqual(item);
  });

  it('new_contact fires for a CRM sync too, with the CRM as source', async () => {
    const trigger = app.triggers.new_contact;
    await subscribe(trigger, '/crm');
    const synced = await env.http.internal('POST', '/accounts/acme/contacts/sync', { phone: '+14155550143', name: 'Cy', source: 'hubspot' });
    expect(synced.body.action).toBe('inserted');
    expect(await performOnDelivery(trigger, '/crm')).toStrictEqual({
      id: synced.body.contact_id,
      contact_id: synced.body.contact_id,
      name: 'Cy',
      phone: '+14155550143',
      source: 'hubspot',
    });
  });

  it('new_conversation and missed_call: a voicemail reaches both hooks, as items keyed by the conversation', async () => {
    const { new_conversation: conversation, missed_call: missed } = app.triggers;
    await subscribe(conversation, '/new_conversation');
    await subscribe(missed, '/missed_call');
    const call = await env.http.internal('POST', '/accounts/acme/calls', {
      channel: 'voice',
      outcome: 'voicemail',
      spam: false,
      caller_name: 'Bo Diaz',
      caller_number: '415 555 0144',
      summary: 'Wants to move Saturday to 11am',
    });
    expect(call.status).toBe(202);
    const conversationId = call.body.conversation_id as string;
    const expected = {
      id: conversationId,
      conversation_id: conversationId,
      channel: 'voice',
      caller_name: 'Bo Diaz',
      caller_number: '+14155550144',
      summary: 'Wants to move Saturday to 11am',
    };
    for (const [trigger, path] of [
      [conversation, '/new_conversation'],
      [missed, '/missed_call'],
    ] as const) {
      const item = await performOnDelivery(trigger, path);
      expect(item).toStrictEqual(expected);
      expect(Object.keys(item)).toStrictEqual(Object.keys(trigger.operation.sample));
      expect((await listed(trigger)).find((recent) => recent.id === conversationId)).toStrictEqual(item);
    }
  });

  it('performList gives items with exactly the keys perform gives, for every trigger', async () => {
    for (const trigger of Object.values(app.triggers)) {
      const recent = await listed(trigger);
      expect(recent.length).toBeGreaterThan(0);
      for (const item of recent) expect(Object.keys(item), trigger.key).toStrictEqual(Object.keys(trigger.operation.sample));
    }
  });

  it('performList gives the events feed’s three newest events of its type, newest first', async () => {
    const trigger = app.triggers.new_contact;
    const { authData: own } = await env.connect('samples-account');
    const phones = ['+14155550150', '+14155550151', '+14155550152', '+14155550153'];
    for (const phone of phones) await env.http.api(own.api_key)('POST', '/contacts', { phone });
    const samples = (await run(trigger.operation.performList, { authData: own, meta: { isLoadingSample: true } })) as Item[];
    expect(samples.map((item) => item.phone)).toStrictEqual(phones.slice(1).reverse());
    const feed = await env.http.api(own.api_key)('GET', '/events?event=new_contact');
    expect(samples).toStrictEqual((feed.body.events as { data: Item }[]).map(({ data }) => ({ id: data.contact_id, ...data })));
  });

  it('unsubscribes, and a second unsubscribe finds the hook already gone', async () => {
    const trigger = app.triggers.missed_call;
    const subscription = await subscribe(trigger, '/short-lived');
    expect(await listedHookIds()).toContain(subscription.id);
    expect(await unsubscribe(trigger, subscription)).toStrictEqual({ id: subscription.id, status: 'deleted' });
    expect(await listedHookIds()).not.toContain(subscription.id);
    expect(await unsubscribe(trigger, subscription)).toStrictEqual({ id: subscription.id, status: 'already_gone' });
  });

  it('unsubscribes without error after the target answered 410 and the service dropped the hook', async () => {
    const trigger = app.triggers.new_contact;
    env.answer('/gone', 410);
    const subscription = await subscribe(trigger, '/gone');
    await env.http.internal('POST', '/accounts/acme/contacts/sync', { phone: '+14155550145', source: 'hubspot' });
    await waitUntil(() => env.received('/gone').length === 1);
    await waitUntil(async () => !(await listedHookIds()).includes(subscription.id));
    expect(await unsubscribe(trigger, subscription)).toStrictEqual({ id: subscription.id, status: 'already_gone' });
  });

  it('unsubscribes without error after the key that subscribed was revoked, when reconnected with a new key', async () => {
    const trigger = app.triggers.new_conversation;
    const first = await env.connect('acme');
    const subscription = await subscribe(trigger, '/revoked', first.authData);
    expect((await env.http.internal('DELETE', `/keys/${first.keyId}`)).status).toBe(200);
    const reconnected = await env.connect('acme');
    expect(await unsubscribe(trigger, subscription, reconnected.authData)).toStrictEqual({ id: subscription.id, status: 'already_gone' });
    // With the revoked key itself the answer is 401: that is expired auth, not "already gone".
    expect(await rejection(unsubscribe(trigger, subscription, first.authData))).toMatchObject({ name: 'ExpiredAuthError' });
  });

  it('maps a refused subscription to a readable error, and refuses to perform on a body that is not a delivery', async () => {
    const trigger = app.triggers.new_contact;
    const refused = appError(await rejection(run(trigger.operation.performSubscribe, { authData, targetUrl: 'http://hooks.example.com/plain' })));
    expect(refused).toMatchObject({ code: 'invalid_target_url', status: 400, message: expect.stringMatching(/public https:\/\/ address/) });

    const notADelivery = appError(await rejection(run(trigger.operation.perform, { authData, cleanedRequest: { hello: 'world' } })));
    expect(notADelivery).toMatchObject({ code: 'invalid_delivery', status: 400 });
  });
});
