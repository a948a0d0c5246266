import type { IDataObject, INodeProperties } from 'n8n-workflow';

/** The events the service fires, as the trigger nodes offer them. */
export const eventProperty: INodeProperties = {
  displayName: 'Event',
  name: 'event',
  type: 'options',
  noDataExpression: true,
  required: true,
  default: 'new_contact',
  options: [
    {
      name: 'New Contact',
      value: 'new_contact',
      description: 'A contact is created, by any API key or a CRM sync (not on updates)',
    },
    {
      name: 'New Conversation',
      value: 'new_conversation',
      description: 'A voice call ends, answered or in voicemail (not spam, not an immediate hang-up)',
    },
    {
      name: 'New Missed Call',
      value: 'missed_call',
      description: 'A voice call goes to voicemail',
    },
  ],
};

/**
 * One event as a workflow item, the same from a live POST and from the feed: the event's `data`
 * (`contact_id`, `name`, `phone`, `source`, or the conversation's fields), then its type and id.
 * The id is the event's: the `webhook-id` of a POST, the `id` of a feed entry.
 */
export function eventItem(eventId: string, event: string, data: IDataObject): IDataObject {
  return { ...data, event, event_id: eventId };
}
