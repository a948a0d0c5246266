import type { IDataObject, INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { eventItem, eventProperty } from '../shared/events';
import { apiRequest, serviceError, type Answer } from '../shared/transport';

/** What this node keeps in the workflow's static data: where the feed was read up to, for which event. */
interface FeedPosition extends IDataObject {
  cursor?: string;
  event?: string;
}

interface FeedEvent {
  id: string;
  event: string;
  data: IDataObject;
}

/** The feed's largest page. */
const PAGE = 100;
/** Pages read in one poll at most; a longer backlog goes on at the next poll. */
const MAX_PAGES = 10;

/**
 * Starts a workflow with the events contact-hooks recorded since the last poll, read from its
 * events feed (`GET /api/v1/events`) on n8n's poll schedule. For an n8n that contact-hooks cannot
 * reach: no public https URL is needed. It is a node of its own because n8n registers a node's
 * webhooks and its poller whenever it has them, whatever its parameters say (see docs/n8n.md).
 */
export class ContactHooksPollingTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Contact Hooks Polling Trigger',
    name: 'contactHooksPollingTrigger',
    icon: { light: 'file:../../icons/contactHooks.svg', dark: 'file:../../icons/contactHooks.dark.svg' },
    group: ['trigger'],
    version: 1,
    subtitle: '={{$parameter["event"]}}',
    description: 'Starts the workflow with new contact-hooks events, read from its events feed on a schedule',
    defaults: { name: 'Contact Hooks Polling Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'contactHooksApi', required: true }],
    polling: true,
    properties: [eventProperty],
  };

  /**
   * "Fetch Test Event" gives the newest event as a sample. The first poll after activation keeps
   * the feed's cursor and starts nothing: an active workflow runs on events from then on, not on
   * one from before it was turned on. Each later poll gives the events after the cursor, oldest
   * first, and moves it. A cursor the service no longer knows (older than its retention) starts
   * over from now.
   */
  async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
    const event = this.getNodeParameter('event') as string;
    const position = this.getWorkflowStaticData('node') as FeedPosition;
    const feed = (query: IDataObject) => apiRequest.call(this, 'GET', '/events', { qs: { event, ...query } });
    const fail = (answer: Answer) => serviceError(this.getNode(), answer);
    const items = (events: FeedEvent[]) =>
      events.length === 0 ? null : [this.helpers.returnJsonArray(events.map((one) => eventItem(one.id, one.event, one.data)))];

    const newest = async () => {
      const answer = await feed({ limit: 1 });
      if (answer.status !== 200) throw fail(answer);
      return { events: answer.body.events as FeedEvent[], cursor: answer.body.next_cursor as string };
    };

    if (this.getMode() === 'manual') return items((await newest()).events);

    if (!position.cursor || position.event !== event) {
      position.cursor = (await newest()).cursor;
      position.event = event;
      return null;
    }

    const found: FeedEvent[] = [];
    let cursor = position.cursor;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await feed({ after: cursor, limit: PAGE });
      if (answer.status === 410 || (answer.status === 400 && answer.body.error === 'invalid_cursor')) {
        // Events past the service's retention are gone: start over from now.
        this.logger.warn(
          `contact-hooks: the feed cursor of ${event} is no longer valid (${String(answer.body.error)}); polling starts over from the newest event`,
        );
        position.cursor = (await newest()).cursor;
        return items(found);
      }
      if (answer.status !== 200) throw fail(answer);
      const events = answer.body.events as FeedEvent[];
      found.push(...events);
      cursor = answer.body.next_cursor as string;
      if (events.length < PAGE) break;
    }
    position.cursor = cursor;
    return items(found);
  }
}
