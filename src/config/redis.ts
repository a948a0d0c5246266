/** The Redis that web processes and workers meet in, and how long BullMQ keeps finished jobs there. */
import { z } from 'zod';
import { duration, setting } from './setting.js';

export const redisSettings = {
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
};
