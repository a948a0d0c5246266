import { z } from 'zod';
import type { HookDisableRule } from './domain/hookHealth.js';
import { SECRETS_KEY_BYTES } from './domain/secretBox.js';

const boolean = z.enum(['true', 'false', '1', '0', '']).transform((value) => value === 'true' || value === '1');

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration such as `5d`, `24h`, `90m`, `30s` or `500ms`; a bare number is seconds. Parsed to ms. */
const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)?$/, 'must be a duration such as 24h, 90m, 30s or 500ms')
  .transform((text) => {
    const [, amount, unit] = /^([\d.]+)(ms|s|m|h|d)?$/.exec(text)!;
    return Number(amount) * DURATION_UNITS_MS[(unit ?? 's') as keyof typeof DURATION_UNITS_MS];
  })
  .refine((ms) => ms > 0, 'must be longer than zero');

/** A web origin, as a CSP source or a link's base: scheme, host (a leading `*.` allowed where said), port; no path. */
const ORIGIN = /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?$/;
const WILDCARD_ORIGIN = /^https?:\/\/(\*\.)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?$/;

/** The sections docs/configuration.md and .env.example group the settings in, in this order. */
export const SETTING_SECTIONS = ['server', 'storage', 'redis', 'delivery', 'retention', 'security', 'operations'] as const;

/**
 * A setting's documentation, kept on its schema (`.meta()`, last in the chain) so that
 * `npm run docs:config` writes docs/configuration.md and .env.example from it. `default` names a
 * default the schema cannot show (derived from another setting); `example` is a value to show
 * for a setting that is unset by default. A duration's default is a `.prefault('24h')`, parsed
 * like a value a user writes, so the documents show it as one would write it.
 */
const setting = (section: (typeof SETTING_SECTIONS)[number], description: string, more: { default?: string; example?: string } = {}) => ({
  section,
  description,
  ...more,
});

export const configSchema = z.object({
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

  REDIS_URL: z
    .url({ protocol: /^rediss?$/ })
    .optional()
    .meta(
      setting(
        'redis',
        "Redis server (`redis://`, or `rediss://` for TLS) that carries each fired event's job from web processes to workers (BullMQ), and counts rate limits across web processes. Unset, with no REDIS_CLUSTER_NODES: the web process delivers in-process.",
        {
          example: 'redis://127.0.0.1:6379',
        },
      ),
    ),
  REDIS_CLUSTER_NODES: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((node) => node.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port, comma-separated')).min(1, 'must name at least one host:port'))
    .transform((nodes) => nodes.map((node) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) })))
    .optional()
    .meta(
      setting(
        'redis',
        'Some nodes of a Redis Cluster, `host:port`, comma-separated, used instead of REDIS_URL (then not read); the client learns the rest of the cluster from them.',
        {
          example: '10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379',
        },
      ),
    ),
  // The service wraps the prefix in a hash tag of its own (src/queue/redisConnection.ts).
  QUEUE_PREFIX: z
    .string()
    .min(1)
    .regex(/^[^{}]+$/, 'must not contain { or }: the service wraps it in a hash tag itself')
    .default('contact-hooks')
    .meta(setting('redis', 'Prefix of every Redis key, so deployments (or test runs) can share one Redis or cluster; no `{` or `}`.')),
  WORKER_LOCK_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(30_000)
    .meta(
      setting(
        'redis',
        "How long a worker holds a BullMQ job before it counts as stalled and goes to another worker (also the stalled check's interval); lower it to recover sooner from a killed worker.",
      ),
    ),
  JOBS_KEEP_COMPLETED: duration
    .prefault('1h')
    .meta(setting('redis', 'How long a completed job stays in Redis for operators to read in Bull Board (its data and what became of each delivery).')),
  JOBS_KEEP_COMPLETED_COUNT: z.coerce.number().int().min(0).default(10_000).meta(setting('redis', 'Completed jobs kept per queue at most, however young.')),
  JOBS_KEEP_FAILED: duration.prefault('7d').meta(setting('redis', 'How long a failed job (its fan-out could not be written) stays in Redis with its reason.')),

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

  RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .default(30)
    .meta(
      setting(
        'retention',
        'Days events, delivery logs, calls and revoked keys are kept (fractions allowed, e.g. `0.5`); contacts are kept for good, and work not yet done until it is done.',
      ),
    ),

  INTERNAL_API_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .meta(
      setting(
        'security',
        'Bearer token (16 characters or more) of the first-party API (`/internal/v1`), `/metrics` and Bull Board (`/admin/queues`, also its Basic password). Unset and embedded: the server makes one and keeps it in DATA_DIR/internal-api-token (mode 0600), where the CLI finds it; unset with DATABASE_URL: those routes answer 404.',
        { example: 'change-me-to-a-long-random-string' },
      ),
    ),
  SECRETS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'must be base64')
    .transform((text) => Buffer.from(text, 'base64'))
    .refine((key) => key.length === SECRETS_KEY_BYTES, `must decode to ${SECRETS_KEY_BYTES} bytes (openssl rand -base64 32)`)
    .optional()
    .meta(
      setting(
        'security',
        '32 random bytes, base64 (`openssl rand -base64 32`): hook signing secrets are then stored encrypted (AES-256-GCM). The same in every process; once set, it cannot be removed or changed. Unset: stored in plaintext.',
      ),
    ),
  DELIVERY_ALLOW_PRIVATE_NETWORKS: boolean
    .default(false)
    .meta(
      setting(
        'security',
        'Lifts the SSRF guard, so a development server can deliver to `contact-hooks listen` on loopback (trusting its certificates in DATA_DIR/listen); refused when NODE_ENV=production.',
      ),
    ),
  PUBLIC_BASE_URL: z
    .string()
    .transform((url) => url.replace(/\/+$/, ''))
    .pipe(z.string().regex(ORIGIN, 'must be an origin such as https://hooks.example.com, without a path'))
    .optional()
    .meta(
      setting('server', "The origin the owner's portal links are made on; unset: the origin the platform's request came to.", {
        example: 'https://hooks.example.com',
      }),
    ),
  PORTAL_FRAME_ANCESTORS: z
    .string()
    .transform((list) => list.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.string().regex(WILDCARD_ORIGIN, 'must be origins such as https://app.example.com, space- or comma-separated')).min(1))
    .optional()
    .meta(
      setting('security', "Origins allowed to frame the owner's portal, space- or comma-separated (`https://*.example.com` allowed); unset: none may.", {
        example: 'https://app.example.com',
      }),
    ),
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
});

/** Past the delivery timeout, the time a POST in flight at shutdown has to record its outcome. */
const SHUTDOWN_MARGIN_MS = 5_000;

const withDerivedDefaults = configSchema
  .superRefine((config, context) => {
    // A production server that delivers to its own network is an SSRF hole, however it got the setting.
    if (config.NODE_ENV === 'production' && config.DELIVERY_ALLOW_PRIVATE_NETWORKS) {
      context.addIssue({
        code: 'custom',
        path: ['DELIVERY_ALLOW_PRIVATE_NETWORKS'],
        message: 'refused when NODE_ENV=production: it lifts the SSRF guard, for development and tests only',
      });
    }
  })
  .transform((config) => ({
    ...config,
    SHUTDOWN_GRACE_MS: config.SHUTDOWN_GRACE_MS ?? config.DELIVERY_TIMEOUT_MS + SHUTDOWN_MARGIN_MS,
  }));

export type Config = z.infer<typeof withDerivedDefaults>;

/**
 * Where the production shape's Redis is: one server, or some nodes of a cluster. The same shape
 * as src/queue/redisConnection.ts's RedisTarget, which takes it (config imports only the domain).
 */
export type RedisTarget = { url: string } | { clusterNodes: Array<{ host: string; port: number }> };

/** The Redis this configuration names (a cluster wins over REDIS_URL), or none: the embedded default. */
export function redisTargetOf(config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): RedisTarget | undefined {
  if (config.REDIS_CLUSTER_NODES) return { clusterNodes: config.REDIS_CLUSTER_NODES };
  return config.REDIS_URL ? { url: config.REDIS_URL } : undefined;
}

export class ConfigError extends Error {}

/** How long BullMQ keeps finished jobs. */
export const keptJobs = (config: Pick<Config, 'JOBS_KEEP_COMPLETED' | 'JOBS_KEEP_COMPLETED_COUNT' | 'JOBS_KEEP_FAILED'>) => ({
  completedMs: config.JOBS_KEEP_COMPLETED,
  completedCount: config.JOBS_KEEP_COMPLETED_COUNT,
  failedMs: config.JOBS_KEEP_FAILED,
});

/** The auto-disable rule the engine's writes apply. */
export const hookDisableRule = (config: Pick<Config, 'HOOK_DISABLE_AFTER' | 'HOOK_DISABLE_MIN_FAILURES'>): HookDisableRule => ({
  afterMs: config.HOOK_DISABLE_AFTER,
  minFailures: config.HOOK_DISABLE_MIN_FAILURES,
});

/**
 * Reads `.env` from the working directory into the environment, when there is one. A variable
 * already in the environment wins over the file (Node's own rule for process.loadEnvFile).
 */
export function loadDotEnv(path = '.env') {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ConfigError(`Invalid configuration:\n  ${path}: ${(error as Error).message}`);
  }
}

/** Parses the environment once, at start; a bad value stops the process with a message naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = withDerivedDefaults.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  return parsed.data;
}
