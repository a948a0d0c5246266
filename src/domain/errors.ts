/**
 * What can go wrong on purpose, said in the domain's words. Nothing here knows HTTP: the API maps
 * each kind to a status and `{"error": code}` in one table (src/api/errors.ts), and the CLI to a
 * message.
 */

/** Input the caller must correct; `code` names what is wrong (missing_phone, invalid_event, ...). */
export class InvalidInputError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** The credentials are missing, unknown, or of a revoked key. */
export class UnauthorizedError extends Error {
  constructor() {
    super('unauthorized');
  }
}

/** What was asked for does not exist, or is not the caller's to see: the two are not told apart. */
export class NotFoundError extends Error {
  constructor() {
    super('not_found');
  }
}

/** The request runs into a limit; `code` names which (hook_limit_reached). */
export class LimitReachedError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/**
 * The database could not be reached, or dropped the connection: nothing the query asked for was
 * committed, and it may be tried again.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database is unavailable', { cause });
  }
}

/** The caller is known but may not do this (a portal session without `manage`, a form without its CSRF token). */
export class ForbiddenError extends Error {
  constructor() {
    super('forbidden');
  }
}

/** What was asked for existed but is spent for good; `code` names how (link_used, link_expired). */
export class GoneError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}
