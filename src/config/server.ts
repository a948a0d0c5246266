/** The web process and its API: where it listens, how long a request may take, what one API key may do. */
import { z } from 'zod';
import { setting } from './setting.js';

export const serverSettings = {
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).meta(setting('server', 'Port the web process listens on.')),
  HOST: z.string().min(1).default('0.0.0.0').meta(setting('server', 'Address the web process listens on.')),
  REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(30_000)
    .meta(setting('server', 'Time a client has to send a whole request, headers and body; past it the request gets 408 and its connection is closed.')),
  RATE_LIMIT_PER_MINUTE: z.coerce
    .number()
    .int()
    .positive()
    .default(600)
    .meta(setting('server', 'Requests one API key may make per minute; with Redis, counted across every web process.')),
  MAX_HOOKS_PER_KEY: z.coerce.number().int().positive().default(100).meta(setting('server', 'Subscriptions one API key may hold.')),
  DEFAULT_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as US')
    .default('US')
    .meta(setting('server', 'Country (ISO 3166-1 alpha-2) in which a phone number written without a leading `+` is read.')),
};
