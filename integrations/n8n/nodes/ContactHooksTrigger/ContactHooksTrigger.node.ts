import type { IDataObject, IHookFunctions, INodeType, INodeTypeDescription, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import { eventItem, eventProperty } from '../shared/events';
import { verifySignature } from '../shared/signature';
import { apiRequest, serviceError } from '../shared/transport';

/** What this node keeps in the workflow's static data: the subscription it made, and its signing secret. */
interface Subscription extends IDataObject {
  hookId?: string;
  secret?: string;
}

/**
 * Starts a workflow on each event contact-hooks POSTs. Activating the workflow subscribes its
 * webhook URL (REST Hooks: `POST /api/v1/hooks`), deactivating it unsubscribes; every POST is
 * checked against the subscription's Standard Webhooks signature before a run starts.
 */
export class ContactHooksTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Contact Hooks Trigger',
    name: 'contactHooksTrigger',
    icon: { light: 'file:../../icons/contactHooks.svg', dark: 'file:../../icons/contactHooks.dark.svg' },
    group: ['trigger'],
    version: 1,
    subtitle: '={{$parameter["event"]}}',
    description: 'Starts the workflow when contact-hooks sends an event (new conversation, missed call, new contact)',
    defaults: { name: 'Contact Hooks Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'contactHooksApi', required: true }],
    webhooks: [
      {
        name: 'default',
        httpMethod: 'POST',
        responseMode: 'onReceived',
        path: 'webhook',
      },
    ],
    properties: [eventProperty],
  };

  webhookMethods = {
    default: {
      /**
       * True when the subscription this node made is still there, for this URL and event; one the
       * service disabled for failing is enabled again, since activating is how a user says "go".
       * Any other subscription to this URL (left by an earlier activation whose secret is lost) is
       * removed, since its POSTs could not be verified.
       */
      async checkExists(this: IHookFunctions): Promise<boolean> {
        const state = this.getWorkflowStaticData('node') as Subscription;
        const webhookUrl = this.getNodeWebhookUrl('default');
        const event = this.getNodeParameter('event') as string;
        const listed = await apiRequest.call(this, 'GET', '/hooks');
        if (listed.status !== 200) throw serviceError(this.getNode(), listed);
        let found = false;
        for (const hook of (listed.body.hooks ?? []) as IDataObject[]) {
          if (hook.target_url !== webhookUrl) continue;
          if (hook.id === state.hookId && hook.event_type === event && state.secret) {
            if (hook.state === 'disabled') {
              const enabled = await apiRequest.call(this, 'POST', `/hooks/${encodeURIComponent(String(hook.id))}/enable`);
              if (enabled.status !== 200) throw serviceError(this.getNode(), enabled);
            }
            found = true;
            continue;
          }
          const removed = await apiRequest.call(this, 'DELETE', `/hooks/${encodeURIComponent(String(hook.id))}`);
          if (removed.status !== 200 && removed.status !== 404) throw serviceError(this.getNode(), removed);
        }
        if (!found) {
          delete state.hookId;
          delete state.secret;
        }
        return found;
      },

      /** Subscribes the webhook URL; the id and the secret, shown only now, go to static data. */
      async create(this: IHookFunctions): Promise<boolean> {
        const webhookUrl = this.getNodeWebhookUrl('default');
        const event = this.getNodeParameter('event') as string;
        const created = await apiRequest.call(this, 'POST', '/hooks', { body: { event, target_url: webhookUrl } });
        if (created.status !== 201) throw serviceError(this.getNode(), created);
        const state = this.getWorkflowStaticData('node') as Subscription;
        state.hookId = created.body.id as string;
        state.secret = created.body.secret as string;
        return true;
      },

      /**
       * Unsubscribes. A 404 means the service already dropped it (its URL answered 410, or its key
       * was revoked). When the service cannot be asked (down, or the key refused), the workflow is
       * deactivated all the same, as n8n's own triggers do, and the subscription is kept in static
       * data: a later activation finds it (a rotated key lists it again) or replaces it.
       */
      async delete(this: IHookFunctions): Promise<boolean> {
        const state = this.getWorkflowStaticData('node') as Subscription;
        if (state.hookId) {
          const removed = await apiRequest.call(this, 'DELETE', `/hooks/${encodeURIComponent(state.hookId)}`).catch(() => undefined);
          if (removed?.status !== 200 && removed?.status !== 404) {
            this.logger.warn(
              `contact-hooks: could not unsubscribe ${state.hookId} (${removed ? `HTTP ${removed.status}` : 'no answer'}); it stays until a later activation`,
            );
            return false;
          }
        }
        delete state.hookId;
        delete state.secret;
        return true;
      },
    },
  };

  /**
   * One POST from contact-hooks. Its signature is checked on the raw body with the secret of this
   * node's subscription; anything else (no secret, a missing, stale or wrong signature) is answered
   * 401 and starts no run. A signed body that is not this node's event is answered 400.
   */
  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const request = this.getRequestObject();
    const response = this.getResponseObject();
    const { secret } = this.getWorkflowStaticData('node') as Subscription;
    const rawBody = (request as unknown as { rawBody?: Buffer }).rawBody?.toString('utf8') ?? '';
    const check = secret ? verifySignature(secret, request.headers, rawBody, Date.now() / 1000) : 'no_subscription';
    if (check !== 'verified') {
      response.status(401).json({ error: 'invalid_signature', reason: check });
      return { noWebhookResponse: true };
    }
    const event = this.getNodeParameter('event') as string;
    const body = this.getBodyData();
    if (body.event !== event || typeof body.data !== 'object' || body.data === null) {
      response.status(400).json({ error: 'unexpected_event' });
      return { noWebhookResponse: true };
    }
    const eventId = request.headers['webhook-id'];
    if (typeof eventId !== 'string') throw new NodeOperationError(this.getNode(), 'The POST has no webhook-id header');
    return { workflowData: [this.helpers.returnJsonArray(eventItem(eventId, event, body.data as IDataObject))] };
  }
}
