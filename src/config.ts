/**
 * The configuration: every setting, one file per concern under src/config/, composed into the one
 * schema the environment is parsed with, once, at start.
 */
import { z } from 'zod';
import { deliverySettings } from './config/delivery.js';
import { operationsSettings } from './config/operations.js';
import { portalSettings } from './config/portal.js';
import { redisSettings } from './config/redis.js';
import { retentionSettings } from './config/retention.js';
import { securitySettings } from './config/security.js';
import { serverSettings } from './config/server.js';
import { storageSettings } from './config/storage.js';
import type { HookDisableRule } from './domain/hookHealth.js';

export { SETTING_SECTIONS } from './config/setting.js';

/** In this order, so docs/configuration.md and .env.example list each section's settings in it. */
export const configSchema = z.object({
  ...serverSettings,
  ...storageSettings,
  ...redisSettings,
  ...deliverySettings,
  ...retentionSettings,
  ...securitySettings,
  ...portalSettings,
  ...operationsSettings,
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
