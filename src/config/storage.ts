/** Where everything is kept: PostgreSQL, or the embedded PGlite in DATA_DIR. */
import { z } from 'zod';
import { setting } from './setting.js';

export const storageSettings = {
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/ })
    .optional()
    .meta(
      setting('storage', 'PostgreSQL server to keep everything in; unset: embedded PGlite in DATA_DIR.', {
        example: 'postgres://postgres@127.0.0.1:5432/contact_hooks',
      }),
    ),
  DATA_DIR: z
    .string()
    .min(1)
    .default('./data')
    .meta(
      setting(
        'storage',
        "Directory of the embedded PGlite database, locked by the one process that opens it; it also keeps the token the server makes and `contact-hooks listen`'s certificates.",
      ),
    ),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(20)
    .meta(
      setting(
        'storage',
        "PostgreSQL connections each process keeps at most for its queries; a process that delivers opens up to 4 more for its batched writes. Mind the server's max_connections across processes.",
      ),
    ),
};
