import { InvalidInputError } from './errors.js';
import { createHash, randomBytes } from 'node:crypto';

/** Every key starts with this, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'chk_';
const API_KEY_SHAPE = /^chk_[A-Za-z0-9_-]{43}$/;

export const newApiKey = () => API_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Keys carry 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** Reads `Authorization: Bearer <key>`; anything not shaped like a key is rejected before storage is asked. */
export function apiKeyFromHeader(header: string | undefined): string | undefined {
  const match = /^Bearer ([^\s]+)$/i.exec(header?.trim() ?? '');
  const key = match?.[1];
  return key !== undefined && API_KEY_SHAPE.test(key) ? key : undefined;
}

/** The identity a request acts as, once its key is recognised. */
export interface Caller {
  keyId: string;
  accountId: string;
  source: string;
  name: string | null;
  createdAt: Date;
}

export const DEFAULT_KEY_SOURCE = 'api';
/** Source labels name an integration (`zapier`, `make`, `hubspot`): short, lowercase, no spaces. */
export const SOURCE_SHAPE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export function validateSource(source: string): string {
  if (!SOURCE_SHAPE.test(source)) throw new InvalidInputError('invalid_source');
  return source;
}
