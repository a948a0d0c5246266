import { InvalidInputError } from './errors.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids we issue are UUIDs: anything else names nothing (and PostgreSQL would refuse it as a uuid). */
export const isUuid = (value: string) => UUID_SHAPE.test(value);

export const MAX_ACCOUNT_ID_LENGTH = 128;

/**
 * An account id is the platform's identifier: present, at most 128 characters, no control
 * characters (PostgreSQL text cannot hold NUL, and ids are shown in logs and URLs).
 */
export const isAccountId = (value: string) =>
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  value.trim() !== '' && value.length <= MAX_ACCOUNT_ID_LENGTH && !/[\u0000-\u001f\u007f]/.test(value);

export function validateAccountId(accountId: string): string {
  if (!isAccountId(accountId)) throw new InvalidInputError('invalid_account');
  return accountId;
}
