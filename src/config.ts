import { z } from 'zod';
import type { HookDisableRule } from './domain/hookHealth.js';
import { SECRETS_KEY_BYTES } from './domain/secretBox.js';

const boolean = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((value) => value === 'true' || value === '1');

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

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Connections each process keeps to PostgreSQL at most; mind the server's max_connections across processes. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(20),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /**
   * Some nodes of a Redis Cluster (`host:port`, comma-separated); every process then uses the
   * cluster, and REDIS_URL is not read. The client learns the rest of the cluster from them.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .transform((list) => list.split(',').map((node) => node.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port, comma-separated')).min(1, 'must name at least one host:port'))
    .transform((nodes) => nodes.map((node) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) })))
    .optional(),
  /**
   * Namespaces every Redis key, so several deployments (or test runs) can share one Redis or
   * cluster. No braces: the service puts it inside a hash tag of its own (src/queue/redisConnection.ts).
   */
  QUEUE_PREFIX: z
    .string()
    .min(1)
    .regex(/^[^{}]+$/, 'must not contain { or }: the service wraps it in a hash tag itself')
    .default('contact-hooks'),
  INTERNAL_API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  DEFAULT_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as US')
    .default('US'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  MAX_HOOKS_PER_KEY: z.coerce.number().int().positive().default(100),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * Deliveries a worker (or the embedded process) sends at once; one waiting for its slot holds
   * none. A delivery holds its slot for its gate, claim, POST and answer, so a process sends at
   * most this many over that time a second (Little's law): 256 over a receiver's 300 ms is about
   * 850/s. On the bench's 2 cores, with a receiver on the same machine, 64 held web + 1 worker to
   * about 0.8 of the durable minimum and 256 let it reach 0.9–1.0 (README, *Changes measured back
   * to back*).
   */
  DELIVERY_CONCURRENCY: z.coerce.number().int().positive().default(256),
  /** Lifts the SSRF guard, so a development server can deliver to `contact-hooks listen` on loopback; refused in production. */
  DELIVERY_ALLOW_PRIVATE_NETWORKS: boolean.default(false),
  /** POSTs per second to one target URL, unless its subscription set max_per_second. Zapier refuses above ~30/s. */
  DELIVERY_RATE_PER_TARGET: z.coerce.number().positive().max(1_000_000).default(20),
  /** POSTs per 5 minutes to one (account, target host): Zapier refuses above 10,000 per user. */
  DELIVERY_BUDGET_PER_HOST: z.coerce.number().int().positive().default(10_000),
  /** A delivery that cannot get its slot within this long after it was queued expires unsent. */
  DELIVERY_MAX_WAIT: duration.default(86_400_000),
  /** POSTs one target URL, account and target host may have in flight per process; unset: derived from DELIVERY_CONCURRENCY. */
  DELIVERY_MAX_IN_FLIGHT_PER_TARGET: z.coerce.number().int().positive().optional(),
  DELIVERY_MAX_IN_FLIGHT_PER_ACCOUNT: z.coerce.number().int().positive().optional(),
  DELIVERY_MAX_IN_FLIGHT_PER_HOST: z.coerce.number().int().positive().optional(),
  /** DNS servers for target names (host or host:port, comma-separated); unset: the system's. */
  DELIVERY_DNS_SERVERS: z
    .string()
    .transform((list) => list.split(',').map((server) => server.trim()).filter(Boolean))
    .optional(),
  DELIVERY_DNS_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
  /** Capacity of the in-process queue used when REDIS_URL is unset. */
  EMBEDDED_QUEUE_CAPACITY: z.coerce.number().int().positive().default(10_000),
  /**
   * How long a worker holds a job before BullMQ counts it stalled and hands it to another worker
   * (also the stalled-check interval). Lower it to recover faster from a killed worker.
   */
  WORKER_LOCK_MS: z.coerce.number().int().min(1_000).default(30_000),
  /**
   * Time a client has to send a whole request, headers and body; past it the request gets 408
   * and its connection is closed. Lower it in tests; 30 s suits any real client.
   */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** Unset: DELIVERY_TIMEOUT_MS plus 5 s, so a deploy lets every POST in flight finish and record. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().optional(),
  /**
   * How long events, delivery logs, calls and revoked keys are kept (fractions allowed). Contacts
   * are kept for good; events not yet fanned out and deliveries queued or sending, until done.
   */
  RETENTION_DAYS: z.coerce.number().positive().default(30),
  /**
   * Auto-disable: a hook whose every delivery failed (non-2xx, refused, timeout, unknown) for
   * this long, at least HOOK_DISABLE_MIN_FAILURES times, is disabled until its owner enables it.
   */
  HOOK_DISABLE_AFTER: duration.default(5 * 86_400_000),
  HOOK_DISABLE_MIN_FAILURES: z.coerce.number().int().positive().default(20),
  /** Port of the worker process's own /metrics endpoint; unset means none. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where a worker's metrics port listens: loopback by default, since it has no login. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * 32 random bytes, base64 (`openssl rand -base64 32`): hook signing secrets are then stored
   * encrypted with AES-256-GCM. Unset: they are stored as they are.
   */
  SECRETS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'must be base64')
    .transform((text) => Buffer.from(text, 'base64'))
    .refine((key) => key.length === SECRETS_KEY_BYTES, `must decode to ${SECRETS_KEY_BYTES} bytes (openssl rand -base64 32)`)
    .optional(),
  /** The origin the owner's portal links are made on (https://hooks.example.com); unset: the origin the platform's request came to. */
  PUBLIC_BASE_URL: z
    .string()
    .transform((url) => url.replace(/\/+$/, ''))
    .pipe(z.string().regex(ORIGIN, 'must be an origin such as https://hooks.example.com, without a path'))
    .optional(),
  /** Origins allowed to frame the owner's portal (space- or comma-separated, `https://*.example.com` allowed); unset: none may. */
  PORTAL_FRAME_ANCESTORS: z
    .string()
    .transform((list) => list.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.string().regex(WILDCARD_ORIGIN, 'must be origins such as https://app.example.com, space- or comma-separated')).min(1))
    .optional(),
  /** Bull Board can empty, clean, retry and add jobs only when this is true. */
  BULL_BOARD_WRITABLE: boolean.default(false),
  /** Node's own; read here only so that production refuses development-only settings. */
  NODE_ENV: z.string().optional(),
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
