import { buildApp } from '../api/app.js';
import { redisTargetOf, type Config } from '../config.js';
import type { FiredEvent } from '../domain/events.js';
import { createMetrics } from '../observability/metrics.js';
import type { JobQueue } from '../queue/jobQueue.js';
import type { RedisClient } from '../queue/redisConnection.js';
import { ensureInternalToken } from '../storage/internalToken.js';
import { openStore } from '../storage/store.js';
import { startEmbeddedEngine } from '../workers/deliveryEngine.js';
import { maintenanceSettings, startMaintenance } from '../workers/maintenance.js';
import { createServices } from '../services/index.js';
import { createLogger, exitWith, onShutdownSignal, runProcess } from './lifecycle.js';

/**
 * The web process. With Redis (REDIS_URL or REDIS_CLUSTER_NODES) it records and enqueues: each
 * committed event becomes a job of the `events` queue, which workers fan out and deliver.
 * Without it, the embedded default, it runs the same queues and engine in-process.
 */
async function main(givenConfig: Config) {
  const redisTarget = redisTargetOf(givenConfig);
  if (redisTarget && !givenConfig.DATABASE_URL) {
    exitWith('REDIS_URL or REDIS_CLUSTER_NODES needs DATABASE_URL: workers run as separate processes, and the embedded PGlite store allows one process');
  }
  const log = createLogger(givenConfig, 'web');
  const { store, advertise } = await openStore(givenConfig, log);
  const config = withEmbeddedToken(givenConfig, log);
  const metrics = createMetrics();

  let events: JobQueue<FiredEvent>;
  let admin;
  let rateLimitRedis: RedisClient | undefined;
  let stopEngine = async () => {};
  let redisReady = Promise.resolve(true);
  if (redisTarget) {
    const { connectWebToRedis } = await import('./webRedis.js');
    const onRedis = connectWebToRedis(config, redisTarget, log);
    ({ events, admin, rateLimitRedis } = onRedis);
    metrics.watchReadiness('redis', () => onRedis.events.ping());
    metrics.watchWorkers(onRedis.events);
    metrics.watchQueues({ queues: { events: onRedis.events, deliveries: onRedis.deliveriesForGauges } });
    stopEngine = () => onRedis.deliveriesForGauges.close();
    redisReady = onRedis.connected();
  } else {
    const engine = startEmbeddedEngine({ config, store, metrics, log });
    const maintenance = startMaintenance(store, log, maintenanceSettings(config), metrics);
    events = engine.events;
    stopEngine = async () => {
      await maintenance.stop();
      await engine.stop();
    };
  }

  // Read here too, not only where the engine runs: when every worker is gone, the web process is
  // what still shows the outbox and the due deliveries growing.
  metrics.watchQueues({ outbox: store.events, due: store.deliveries });
  metrics.watchReadiness('postgres', store.ping);
  const services = createServices({ store, events, config, log });
  const app = await buildApp({ config, services, metrics, logger: log, admin, rateLimitRedis });
  if (!(await redisReady)) log.warn('Redis not ready: listening anyway; requests are not rate-limited and events wait in the outbox until it is');
  const address = await app.listen({ port: config.PORT, host: config.HOST });
  const port = new URL(address).port;
  advertise(`http://127.0.0.1:${port}`);
  log.info(
    { address, storage: store.db.engine, mode: redisTarget ? 'workers' : 'embedded', redisCluster: redisTarget !== undefined && 'clusterNodes' in redisTarget },
    'listening',
  );

  onShutdownSignal(log, config.SHUTDOWN_GRACE_MS, async () => {
    // Stop accepting and let in-flight requests finish; keep-alive connections that were busy
    // when closing began are closed as soon as they go idle, instead of after their timeout.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close().finally(() => clearInterval(sweep));
    rateLimitRedis?.disconnect();
    await stopEngine(); // embedded: lets running deliveries finish
    await events.close();
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
  log.info(
    { path },
    generated ? 'INTERNAL_API_TOKEN unset: generated one, readable only by this user' : 'INTERNAL_API_TOKEN unset: using the one stored earlier',
  );
  return { ...config, INTERNAL_API_TOKEN: token };
}

await runProcess(main);
