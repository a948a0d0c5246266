import { InvalidInputError } from './errors.js';
import { isEventType, type EventType } from './events.js';

export const MAX_TARGET_URL_LENGTH = 2048;

/** The pace a subscription may ask for, in POSTs per second; unset means DELIVERY_RATE_PER_TARGET. */
export const MAX_PER_SECOND_RANGE = { min: 1, max: 1000 } as const;

/** A subscription's target must be an absolute https URL with a host; anything else is refused. */
export function validateTargetUrl(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_TARGET_URL_LENGTH) throw new InvalidInputError('invalid_target_url');
  // The URL parser strips or escapes spaces and control characters, but the target is stored and
  // shown as sent, so it must already be a URL as it stands.
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw new InvalidInputError('invalid_target_url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidInputError('invalid_target_url');
  }
  if (url.protocol !== 'https:' || url.hostname === '' || url.username !== '' || url.password !== '') {
    throw new InvalidInputError('invalid_target_url');
  }
  return raw;
}

export function validateEventType(raw: unknown): EventType {
  if (!isEventType(raw)) throw new InvalidInputError('invalid_event');
  return raw;
}
