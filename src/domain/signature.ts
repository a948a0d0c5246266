import { createHmac, randomBytes } from 'node:crypto';

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
export function signatureHeaders(
  secret: string,
  messageId: string,
  body: string,
  timestampSeconds: number,
): SignatureHeaders {
  // The HMAC key is the decoded secret, not its text; a secret without the prefix is taken as bare base64.
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const timestamp = String(Math.floor(timestampSeconds));
  const signature = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
