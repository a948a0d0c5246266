import { buildApp } from '../api/app.js';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { createMetrics } from '../observability/metrics.js';
import { bullBoard } from '../api/bullBoard.js';
import { createBullProducer, QUEUE_NAMES } from '../queue/bullmq.js';
import { ensureInternalToken } from '../storage/internalToken.js';
import { openStore } from '../storage/store.js';
import { startEmbeddedEngine } from '../workers/deliveryEngine.js';
import type { EventJob } from '../workers/jobs.js';
import { maintenanceSettings, startMaintenance } from '../workers/maintenance.js';
import { createServices } from '../services/index.js';
import { createLogger, exitWith, onShutdownSignal, runProcess } from './lifecycle.js';

/**
 * The web process. With REDIS_URL it only produces jobs (workers deliver); without it, the
 * embedded default, it also runs the delivery engine in-process.
 */
async function main(givenConfig: Config) {
  if (givenConfig.REDIS_URL && !givenConfig.DATABASE_URL) {
    exitWith('REDIS_URL needs DATABASE_URL: workers run as separate processes, and the embedded PGlite store allows one process');
  }
  const log = createLogger(givenConfig, 'web');
  const { store, advertise } = await openStore(givenConfig, log);
  const config = withEmbeddedToken(givenConfig, log);
  const metrics = createMetrics();

  let queue;
  let admin;
  let rateLimitRedis: Redis | undefined;
  let stopEmbeddedEngine = async () => {};
  if (config.REDIS_URL) {
    const redis = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX };
    queue = createBullProducer<EventJob>(redis, 'events', { log, failFast: true });
    admin = bullBoard({ ...redis, queueNames: QUEUE_NAMES, writable: config.BULL_BOARD_WRITABLE });
    // Fail fast, like the producer: a request never waits on Redis for its rate-limit count.
    rateLimitRedis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000 });
    rateLimitRedis.on('error', (error) => log.warn({ err: error }, 'rate-limit Redis unavailable; requests are not counted meanwhile'));
  } else {
    const engine = startEmbeddedEngine({ config, store, metrics, log });
    const maintenance = startMaintenance(store, log, maintenanceSettings(config));
    queue = engine.events;
    stopEmbeddedEngine = async () => {
      await maintenance.stop();
      await engine.stop();
    };
  }

  metrics.watchQueues({ events: queue });
  const services = createServices({ store, queue, config, log });
  const app = await buildApp({ config, services, metrics, logger: log, admin, rateLimitRedis });
  const address = await app.listen({ port: config.PORT, host: config.HOST });
  const port = new URL(address).port;
  advertise(`http://127.0.0.1:${port}`);
  log.info({ address, storage: store.db.engine, queue: config.REDIS_URL ? 'bullmq' : 'embedded' }, 'listening');

  onShutdownSignal(log, config.SHUTDOWN_GRACE_MS, async () => {
    // Stop accepting and let in-flight requests finish; keep-alive connections that were busy
    // when closing began are closed as soon as they go idle, instead of after their timeout.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close().finally(() => clearInterval(sweep));
    if (config.REDIS_URL) await queue.close();
    rateLimitRedis?.disconnect();
    await stopEmbeddedEngine(); // embedded: lets running deliveries finish
    await store.close();
  });
}

/**
 * On the embedded default without INTERNAL_API_TOKEN, the token stored in DATA_DIR (made on the
 * first start), so the CLI beside this server needs no restart and no shared variable. With
 * DATABASE_URL nothing is made: an operator gives the token, or the first-party API stays off.
 */
function withEmbeddedToken(config: Config, log: ReturnType<typeof createLogger>): Config {
  if (config.DATABASE_URL || config.INTERNAL_API_TOKEN) return config;
  const { token, path, generated } = ensureInternalToken(config.DATA_DIR);
  log.info({ path }, generated ? 'INTERNAL_API_TOKEN unset: generated one, readable only by this user' : 'INTERNAL_API_TOKEN unset: using the one stored earlier');
  return { ...config, INTERNAL_API_TOKEN: token };
}

await runProcess(main);
