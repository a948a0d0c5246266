import { InvalidInputError, GoneError } from './errors.js';
import { validateEventType } from './hooks.js';
import type { EventType } from './events.js';
import { isUuid } from './ids.js';

/**
 * The events feed's rules (GET /api/v1/events): its cursor, its limits and when a cursor has
 * expired. The feed's order is the order in which PostgreSQL gave the events' transactions their
 * ids, then the event ids; it shows an event only once every transaction that began before its
 * own has ended, so nothing can later appear behind a cursor a client already holds.
 */

/** Samples: what a trigger shows while it is set up. */
export const FEED_SAMPLE_LIMIT = 3;
/** A page read after a cursor. */
export const FEED_PAGE_LIMIT = 100;
export const FEED_MAX_LIMIT = 100;

/** A place in the feed: after the event `id` of transaction `tx`; `at` is when that place was, for expiry. */
export interface FeedPosition {
  /** PostgreSQL's 64-bit transaction id (xid8), as decimal text. */
  tx: string;
  id: string;
  at: Date;
}

/** The id that sorts before every event's: a position at the start of transaction `tx`. */
export const BEFORE_ANY_ID = '00000000-0000-0000-0000-000000000000';

export interface EventFeedInput {
  event?: string | undefined;
  after?: string | undefined;
  limit?: string | undefined;
}

export interface EventFeedQuery {
  event: EventType;
  /** Absent: the newest events, newest first, and the place to poll from. */
  after?: FeedPosition | undefined;
  limit: number;
}

const MAX_XID8 = 2n ** 64n - 1n;

/** The cursor is opaque to clients: base64url of the position. */
export const encodeFeedCursor = (position: FeedPosition) => Buffer.from(`${position.tx}|${position.id}|${position.at.getTime()}`).toString('base64url');

function decodeFeedCursor(raw: string): FeedPosition {
  const [tx, id, atMs, ...rest] = /^[A-Za-z0-9_-]{1,200}$/.test(raw) ? Buffer.from(raw, 'base64url').toString().split('|') : [];
  const valid = tx !== undefined && id !== undefined && atMs !== undefined && rest.length === 0;
  if (!valid || !/^\d{1,20}$/.test(tx) || BigInt(tx) > MAX_XID8 || !isUuid(id) || !/^\d{1,15}$/.test(atMs)) {
    throw new InvalidInputError('invalid_cursor');
  }
  return { tx, id: id.toLowerCase(), at: new Date(Number(atMs)) };
}

function limitOf(raw: string | undefined, paging: boolean): number {
  if (raw === undefined) return paging ? FEED_PAGE_LIMIT : FEED_SAMPLE_LIMIT;
  const value = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= FEED_MAX_LIMIT)) throw new InvalidInputError('invalid_limit');
  return value;
}

/**
 * Validates a feed request. A cursor from before retention's cutoff has expired: events after
 * it may have been deleted unseen, so the client is told (410 `cursor_expired`) rather than
 * handed a page with a silent gap; it starts again without `after`.
 */
export function eventFeedQuery(input: EventFeedInput, now: Date, retentionDays: number): EventFeedQuery {
  const event = validateEventType(input.event);
  const after = input.after === undefined ? undefined : decodeFeedCursor(input.after);
  const limit = limitOf(input.limit, after !== undefined);
  if (after && after.at.getTime() < now.getTime() - retentionDays * 86_400_000) throw new GoneError('cursor_expired');
  return { event, after, limit };
}

/** The later of two positions in the feed's order. */
export function laterPosition(a: FeedPosition, b: FeedPosition): FeedPosition {
  const [ta, tb] = [BigInt(a.tx), BigInt(b.tx)];
  if (ta !== tb) return ta > tb ? a : b;
  return a.id >= b.id ? a : b;
}
