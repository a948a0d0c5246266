import { DELIVERY_STATUSES, type DeliveryStatus } from './delivery.js';
import { InvalidInputError } from './errors.js';
import { isUuid } from './ids.js';

export const DELIVERY_LOG_MAX_LIMIT = 100;
/** Unpaged clients (before the cursor) got the latest 100: the default keeps their answer. */
export const DELIVERY_LOG_DEFAULT_LIMIT = 100;

/** Where a page ends: the last row's queued_at (with PostgreSQL's microseconds, as text) and id. */
export interface LogPosition {
  queuedAt: string;
  id: string;
}

/** A delivery log query, validated: each filter is optional. */
export interface DeliveryLogFilter {
  statuses?: DeliveryStatus[] | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  eventId?: string | undefined;
  hookId?: string | undefined;
  limit: number;
  after?: LogPosition | undefined;
}

export interface DeliveryLogInput {
  status?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  event_id?: string | undefined;
  hook_id?: string | undefined;
  limit?: string | undefined;
  cursor?: string | undefined;
}

// ISO 8601 date and time with a zone: a bare date or local time would be read in the server's zone.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
// What the cursor's time is made of (see the storage's to_char): UTC, microseconds.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function time(raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const parsed = ISO_TIME.test(raw) ? new Date(raw) : undefined;
  if (!parsed || Number.isNaN(parsed.getTime())) throw new InvalidInputError('invalid_time');
  return parsed;
}

function statuses(raw: string | undefined): DeliveryStatus[] | undefined {
  if (raw === undefined) return undefined;
  const named = raw.split(',');
  if (!named.every((status): status is DeliveryStatus => (DELIVERY_STATUSES as readonly string[]).includes(status))) {
    throw new InvalidInputError('invalid_status');
  }
  return [...new Set(named)];
}

function limit(raw: string | undefined): number {
  if (raw === undefined) return DELIVERY_LOG_DEFAULT_LIMIT;
  const value = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= DELIVERY_LOG_MAX_LIMIT)) throw new InvalidInputError('invalid_limit');
  return value;
}

function id(raw: string | undefined, code: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!isUuid(raw)) throw new InvalidInputError(code);
  return raw.toLowerCase();
}

/** The cursor is opaque to clients: base64url of the last row's position. */
export const encodeCursor = (position: LogPosition) => Buffer.from(`${position.queuedAt}|${position.id}`).toString('base64url');

export function decodeCursor(raw: string | undefined): LogPosition | undefined {
  if (raw === undefined) return undefined;
  const [queuedAt, rowId, ...rest] = /^[A-Za-z0-9_-]+$/.test(raw) ? Buffer.from(raw, 'base64url').toString().split('|') : [];
  if (queuedAt === undefined || rowId === undefined || rest.length > 0 || !CURSOR_TIME.test(queuedAt) || !isUuid(rowId)) {
    throw new InvalidInputError('invalid_cursor');
  }
  return { queuedAt, id: rowId };
}

/** Reads a delivery log query, refusing a bad filter with the code that names it. */
export function parseDeliveryLogQuery(input: DeliveryLogInput): DeliveryLogFilter {
  return {
    statuses: statuses(input.status),
    since: time(input.since),
    until: time(input.until),
    eventId: id(input.event_id, 'invalid_event_id'),
    hookId: id(input.hook_id, 'invalid_hook_id'),
    limit: limit(input.limit),
    after: decodeCursor(input.cursor),
  };
}
