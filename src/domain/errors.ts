/**
 * The few errors the service reports on purpose. Each carries the HTTP status and the
 * `{"error": code}` it maps to; the API's one error handler turns them into responses.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
  }
}

export const badRequest = (code: string) => new DomainError(code, 400);
export const unauthorized = () => new DomainError('unauthorized', 401);
export const notFound = () => new DomainError('not_found', 404);
export const conflict = (code: string) => new DomainError(code, 409);
/** Storage or queue is away: the client may try again; nothing was written. */
export const unavailable = () => new DomainError('unavailable', 503);
