import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS, retryAfterMs } from '../../src/domain/throttling.js';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  it.each([
    ['delay seconds', '7', 7_000],
    ['zero', '0', 0],
    ['an HTTP date', 'Mon, 23 Nov 2026 12:00:30 GMT', 30_000],
    ['a date in the past', 'Mon, 23 Nov 2026 11:00:00 GMT', 0],
    ['more than ten minutes', '3600', MAX_RETRY_AFTER_MS],
    ['absent', undefined, DEFAULT_RETRY_AFTER_MS],
    ['unreadable', 'soon', DEFAULT_RETRY_AFTER_MS],
    ['negative', '-5', DEFAULT_RETRY_AFTER_MS],
  ])('reads %s', (_why, header, expected) => {
    expect(retryAfterMs(header, now)).toBe(expected);
  });
});
