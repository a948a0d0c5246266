import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../domain/errors.js';

/**
 * Request bodies are JSON only: any other type is 415 unsupported_media_type. A bodiless DELETE
 * or GET that still says application/json is fine; an empty POST then fails validation.
 */
export function acceptJsonBodiesOnly(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body as string);
    } catch {
      return done(new InvalidInputError('invalid_json'), undefined);
    }
    // PostgreSQL text cannot hold NUL: refused here as the client's error, not a 500 from storage.
    if ((body as string).includes('\\u0000') && containsNul(parsed)) return done(new InvalidInputError('invalid_request'), undefined);
    done(null, parsed);
  });
}

function containsNul(value: unknown): boolean {
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string' && next.includes('\u0000')) return true;
    if (typeof next === 'object' && next !== null) for (const item of Object.values(next)) pending.push(item);
  }
  return false;
}
