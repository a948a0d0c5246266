import { InvalidInputError } from '../../src/domain/errors.js';

/** The code of the InvalidInputError a call throws, so each test names the exact error. */
export function errorCode(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof InvalidInputError) return error.code;
    throw error;
  }
  throw new Error('expected an InvalidInputError, nothing was thrown');
}
