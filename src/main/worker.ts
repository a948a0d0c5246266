import { createServer } from 'node:http';
import { keptJobs, redisTargetOf, type Config } from '../config.js';
import { createMetrics } from '../observability/metrics.js';
import { openStore } from '../storage/store.js';
import { startWorkerEngine } from '../workers/workerEngine.js';
import { maintenanceSettings, startMaintenance } from '../workers/maintenance.js';
import { createLogger, exitWith, onShutdownSignal, runProcess } from './lifecycle.js';

/**
 * A worker process: takes the jobs of the `events` queue (fans each event out and delivers it)
 * and of the `deliveries` queue (parked and relayed deliveries), paced through Redis, and relays
 * what the queues lost. Run as many as needed; they share PostgreSQL and Redis.
 */
async function main(config: Config) {
  const redisTarget = redisTargetOf(config);
  if (!redisTarget || !config.DATABASE_URL) {
    exitWith('a worker needs REDIS_URL (or REDIS_CLUSTER_NODES) and DATABASE_URL (without Redis, `npm start` delivers in-process)');
  }
  const log = createLogger(config, 'worker');
  const { store } = await openStore(config, log);
  const metrics = createMetrics();
  const engine = startWorkerEngine({ config, store, metrics, log }, { target: redisTarget, prefix: config.QUEUE_PREFIX }, keptJobs(config));
  const maintenance = startMaintenance(store, log, maintenanceSettings(config), metrics);
  metrics.watchReadiness('postgres', store.ping);

  const metricsServer =
    config.WORKER_METRICS_PORT === undefined
      ? undefined
      : createServer((request, response) => {
          if (request.url !== '/metrics') return response.writeHead(404).end();
          void metrics.registry.metrics().then((text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text));
        }).listen(config.WORKER_METRICS_PORT, config.METRICS_HOST);

  log.info({ concurrency: config.DELIVERY_CONCURRENCY }, 'worker started');
  onShutdownSignal(log, config.SHUTDOWN_GRACE_MS, async () => {
    await engine.stop(); // takes no new jobs, waits for the running ones
    await maintenance.stop();
    metricsServer?.close();
    await store.close();
  });
}

await runProcess(main);
