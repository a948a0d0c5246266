'use strict';

const { apiUrl } = require('../api');
const { throwForServiceError } = require('../errors');

/**
 * One REST Hook trigger for one event type of the service. Zapier subscribes its own hook URL
 * when a Zap is turned on, the service POSTs `{event, data}` there for each event, and Zapier
 * unsubscribes when the Zap is turned off. `perform` (a live delivery) and `performList` (the
 * events feed's newest events, for samples while building the Zap) give items of exactly the same
 * shape, since the feed carries each event's `data` as its POSTs do.
 */
const restHookTrigger = ({ event, idField, noun, display, sample, outputFields }) => {
  /**
   * `{id, ...data}`. Zapier deduplicates on `id`, so it is the conversation or contact the event
   * is about, which stays the same however the event reached us.
   */
  const toItem = (z, delivered) => {
    const data = delivered && delivered.data;
    if (!data || typeof data !== 'object' || typeof data[idField] !== 'string') {
      throw new z.errors.Error(`This request is not a contact-hooks ${event} delivery: it has no data.${idField}.`, 'invalid_delivery', 400);
    }
    return { id: data[idField], ...data };
  };

  const performSubscribe = async (z, bundle) => {
    const response = await z.request({
      url: apiUrl(z, bundle, '/hooks'),
      method: 'POST',
      body: { event, target_url: bundle.targetUrl },
    });
    // The signing secret stays out of what Zapier stores: this app does not verify signatures
    // (the hook URL Zapier generates is itself unguessable), so keeping it would only spread it.
    const { secret, ...subscription } = response.data;
    return subscription;
  };

  /** A 404 means the subscription is already gone (its target answered 410, or its key was revoked). */
  const performUnsubscribe = async (z, bundle) => {
    const id = bundle.subscribeData && bundle.subscribeData.id;
    const response = await z.request({
      url: apiUrl(z, bundle, `/hooks/${encodeURIComponent(String(id))}`),
      method: 'DELETE',
      skipThrowForStatus: true,
    });
    if (response.status === 404) return { id, status: 'already_gone' };
    if (response.status >= 400) throwForServiceError(z, response);
    return { id, status: 'deleted' };
  };

  const perform = (z, bundle) => [toItem(z, bundle.cleanedRequest)];

  const performList = async (z, bundle) => {
    // The feed without a cursor: the newest events, newest first. Three: as many samples as the Zap editor offers.
    const response = await z.request({ url: apiUrl(z, bundle, '/events'), params: { event, limit: 3 } });
    return response.data.events.map((recent) => toItem(z, recent));
  };

  return {
    key: event,
    noun,
    display,
    operation: { type: 'hook', performSubscribe, performUnsubscribe, perform, performList, sample, outputFields },
  };
};

module.exports = { restHookTrigger };
