import type { ReceivedRequest, ReceiverResponse } from './receiver.js';

/**
 * A receiver answer that enforces a rate as Zapier does: a token bucket of `perSecond` tokens,
 * refilled continuously; a request finding it empty gets 429 with Retry-After. `refused` counts
 * those, so a test can show none were provoked.
 */
export function tokenBucket(perSecond: number, retryAfterSeconds = 1) {
  let tokens = perSecond;
  let last = performance.now();
  const bucket = {
    refused: 0,
    answer(_request: ReceivedRequest): ReceiverResponse {
      const now = performance.now();
      tokens = Math.min(perSecond, tokens + ((now - last) / 1000) * perSecond);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return { status: 200 };
      }
      bucket.refused++;
      return { status: 429, headers: { 'retry-after': String(retryAfterSeconds) } };
    },
  };
  return bucket;
}

/** The most requests that arrived within any `windowMs` (sliding): what a rate limiter sees. */
export function busiestWindow(arrivals: number[], windowMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
