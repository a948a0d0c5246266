import { z } from 'zod';

const boolean = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((value) => value === 'true' || value === '1');

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Connections each process keeps to PostgreSQL at most; mind the server's max_connections across processes. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(20),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** Namespaces every BullMQ key, so several deployments (or test runs) can share one Redis. */
  QUEUE_PREFIX: z.string().min(1).default('contact-hooks'),
  INTERNAL_API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  DEFAULT_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as US')
    .default('US'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  MAX_HOOKS_PER_KEY: z.coerce.number().int().positive().default(100),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  DELIVERY_CONCURRENCY: z.coerce.number().int().positive().default(64),
  DELIVERY_ALLOW_PRIVATE_NETWORKS: boolean.default(false),
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
  SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().default(10_000),
  /** Port of the worker process's own /metrics endpoint; unset means none. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where a worker's metrics port listens: loopback by default, since it has no login. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Bull Board can empty, clean, retry and add jobs only when this is true. */
  BULL_BOARD_WRITABLE: boolean.default(false),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Parses the environment once, at start; a bad value stops the process with a message naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  return parsed.data;
}
