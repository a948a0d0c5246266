export const EVENT_TYPES = ['new_conversation', 'missed_call', 'new_contact'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: unknown): value is EventType =>
  typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

export interface ConversationData {
  conversation_id: string;
  channel: 'voice';
  caller_name: string;
  caller_number: string;
  summary: string;
}

export interface NewContactData {
  contact_id: string;
  name: string;
  phone: string;
  source: string;
}

/**
 * A recorded event, as its job in the `events` queue carries it: small, and no secret, since job
 * data is clear text in Redis and on Bull Board. `fired_at` is its creation time to the
 * microsecond (ISO 8601), which finds its rows.
 */
export interface FiredEvent {
  event_id: string;
  event: EventType;
  account_id: string;
  fired_at: string;
}

/** An event about to be recorded: the outbox row written in the same transaction as its cause. */
export type PendingEvent =
  | { type: 'new_conversation' | 'missed_call'; data: ConversationData }
  | { type: 'new_contact'; data: NewContactData };

/**
 * The body every subscriber receives, exactly: `{"event": <type>, "data": {...}}`, around an
 * event's data as stored (compact JSON, as JSON.stringify wrote it). It is the same text as
 * JSON.stringify({ event, data }), built without parsing the data or serialising it again for
 * each subscription.
 */
export const envelopeBody = (type: EventType, storedData: string) => `{"event":${JSON.stringify(type)},"data":${storedData}}`;
