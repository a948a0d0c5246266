import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Standard Webhooks secret: `whsec_` + base64 of 24 random bytes (192-bit key). */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** Headers for one Standard Webhooks message (https://www.standardwebhooks.com). */
export function signatureHeaders(secret: string, messageId: string, body: string, timestampSeconds: number): SignatureHeaders {
  // The HMAC key is the decoded secret, not its text; a secret without the prefix is taken as bare base64.
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const timestamp = String(Math.floor(timestampSeconds));
  const signature = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** How far a message's timestamp may be from the receiver's clock (Standard Webhooks' usual 5 minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = 'verified' | 'missing_headers' | 'stale_timestamp' | 'mismatch';

/**
 * A receiver's check of one message: a `v1,` signature among the header's space-separated ones
 * matches the secret, and the timestamp is within the tolerance (against replays).
 */
export function verifySignature(secret: string, headers: Partial<Record<keyof SignatureHeaders, string>>, body: string, nowSeconds: number): SignatureCheck {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return 'missing_headers';
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return 'stale_timestamp';
  const expected = Buffer.from(signatureHeaders(secret, id, body, Number(timestamp))['webhook-signature']);
  const matches = signatures
    .split(' ')
    .map((candidate) => Buffer.from(candidate))
    .some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
  return matches ? 'verified' : 'mismatch';
}
