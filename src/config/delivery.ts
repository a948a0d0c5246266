/** How deliveries are sent and paced, and when a hook that keeps failing is disabled. */
import { z } from 'zod';
import { duration, setting } from './setting.js';

export const deliverySettings = {
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000).meta(setting('delivery', 'Total time of one POST attempt.')),
  // A delivery holds its slot from its gate to its answer, hence the rate bound (Little's law).
  DELIVERY_CONCURRENCY: z.coerce
    .number()
    .int()
    .positive()
    .default(256)
    .meta(
      setting(
        'delivery',
        "Deliveries one process (a worker, or the embedded web process) sends at once; one waiting for its time holds none. It bounds a process's rate at about this many per POST's duration: 850/s at 300 ms.",
      ),
    ),
  DELIVERY_RATE_PER_TARGET: z.coerce
    .number()
    .positive()
    .max(1_000_000)
    .default(20)
    .meta(
      setting('delivery', 'POSTs per second to one target URL, unless its subscription set `max_per_second` (Zapier refuses above about 30/s per hook URL).'),
    ),
  DELIVERY_BUDGET_PER_HOST: z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .meta(setting('delivery', 'POSTs per 5 minutes to one (account, target host) pair (Zapier refuses above 10,000 per user).')),
  DELIVERY_MAX_WAIT: duration
    .prefault('24h')
    .meta(setting('delivery', 'A delivery that gets no time to be sent within this long after it was queued expires unsent.')),
  DELIVERY_MAX_IN_FLIGHT_PER_TARGET: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta(setting('delivery', 'POSTs one target URL may have in flight per process.', { default: 'DELIVERY_CONCURRENCY ÷ 8', example: '32' })),
  DELIVERY_MAX_IN_FLIGHT_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta(setting('delivery', 'POSTs one account may have in flight per process.', { default: 'DELIVERY_CONCURRENCY ÷ 2', example: '128' })),
  DELIVERY_MAX_IN_FLIGHT_PER_HOST: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta(setting('delivery', 'POSTs one target host may have in flight per process.', { default: '¾ of DELIVERY_CONCURRENCY', example: '192' })),
  DELIVERY_DNS_SERVERS: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((server) => server.trim())
        .filter(Boolean),
    )
    .optional()
    .meta(
      setting('delivery', 'DNS servers for target names, `host` or `host:port`, comma-separated.', { default: "the system's", example: '1.1.1.1,8.8.8.8' }),
    ),
  DELIVERY_DNS_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000).meta(setting('delivery', 'Longest one target name may take to resolve.')),
  EMBEDDED_QUEUE_CAPACITY: z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .meta(
      setting(
        'delivery',
        'Embedded mode: jobs each in-process queue (events, deliveries) holds at most; beyond it, the rest wait in the database, and the relay adds them as room comes.',
      ),
    ),
  HOOK_DISABLE_AFTER: duration
    .prefault('5d')
    .meta(
      setting(
        'delivery',
        'Auto-disable: a hook whose every delivery failed (non-2xx, refused, timed out) for this long, at least HOOK_DISABLE_MIN_FAILURES times, is disabled until its owner enables it.',
      ),
    ),
  HOOK_DISABLE_MIN_FAILURES: z.coerce
    .number()
    .int()
    .positive()
    .default(20)
    .meta(setting('delivery', 'Auto-disable: the failures a hook needs at least, besides HOOK_DISABLE_AFTER.')),
};
