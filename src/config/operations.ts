/** What operators run the service with: Bull Board, logs, metrics and shutdown. */
import { z } from 'zod';
import { boolean, setting } from './setting.js';

export const operationsSettings = {
  // Listed under security, beside who may open the operator pages.
  BULL_BOARD_WRITABLE: boolean
    .default(false)
    .meta(setting('security', 'Lets Bull Board empty, clean, retry, promote, add and pause jobs; otherwise it is read-only.')),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .meta(setting('operations', 'Log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.')),
  SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta(
      setting(
        'operations',
        'Time a process has to drain on SIGTERM; longer than the delivery timeout, so a deploy lets every POST in flight finish and record its outcome.',
        { default: 'DELIVERY_TIMEOUT_MS + 5000', example: '15000' },
      ),
    ),
  WORKER_METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta(setting('operations', "Port of a worker's own `/metrics` (no login); unset: none.", { example: '9100' })),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .meta(setting('operations', "Address a worker's metrics port listens on: loopback unless asked, since it has no login.")),
  // Read only so that production refuses development-only settings.
  NODE_ENV: z
    .string()
    .optional()
    .meta(setting('operations', "Node's own; `production` refuses development-only settings (DELIVERY_ALLOW_PRIVATE_NETWORKS).", { example: 'production' })),
};
