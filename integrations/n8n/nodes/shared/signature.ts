import { createHmac, timingSafeEqual } from 'crypto';

const SECRET_PREFIX = 'whsec_';

/** How far a message's timestamp may be from n8n's clock (Standard Webhooks' usual 5 minutes), against replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = 'verified' | 'missing_headers' | 'stale_timestamp' | 'mismatch';

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The Standard Webhooks check of one POST (https://www.standardwebhooks.com), as contact-hooks
 * signs it: `webhook-signature` holds, among space-separated signatures, `v1,` and the base64
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 after
 * `whsec_` in the subscription's secret; and the timestamp is within the tolerance.
 */
export function verifySignature(secret: string, headers: Record<string, string | string[] | undefined>, rawBody: string, nowSeconds: number): SignatureCheck {
  const id = header(headers['webhook-id']);
  const timestamp = header(headers['webhook-timestamp']);
  const signatures = header(headers['webhook-signature']);
  if (!id || !timestamp || !signatures) return 'missing_headers';
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return 'stale_timestamp';
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const expected = Buffer.from(`v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest('base64')}`);
  const matches = signatures
    .split(' ')
    .map((candidate) => Buffer.from(candidate))
    .some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
  return matches ? 'verified' : 'mismatch';
}
