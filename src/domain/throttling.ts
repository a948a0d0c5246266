/** A target's answers that mean "too much, slow down", and how long it asked us to stay away. */

/** Retry-After is honoured up to this long: a target cannot park our queue for hours. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** A 429 or 503 without a usable Retry-After holds the target this long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * How long a target asked us to stay away, from a 429 or 503 answer's Retry-After: delay
 * seconds or an HTTP date, capped at ten minutes, one second when absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number {
  const value = header?.trim() ?? '';
  let ms = Number.NaN;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else if (/[a-z]/i.test(value)) ms = Date.parse(value) - now; // an HTTP date names its day and month
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** Answers that mean "too much, slow down": recorded as failed, and the target is held. */
export const isThrottled = (status: number) => status === 429 || status === 503;
