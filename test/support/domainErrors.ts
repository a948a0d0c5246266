import { DomainError } from '../../src/domain/errors.js';

/** The code of the DomainError a call throws, so each test names the exact error. */
export function errorCode(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof DomainError) return `${error.status} ${error.code}`;
    throw error;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}
