import { createServer } from 'node:http';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createMetrics } from '../observability/metrics.js';
import { createBullProducer, startBullWorker } from '../queue/bullmq.js';
import { openStore } from '../storage/store.js';
import { startOutboxRelay } from '../workers/outboxRelay.js';
import { createDelivery, createLogger, exitWith, onShutdownSignal } from './runtime.js';

/**
 * A worker process: consumes event jobs from BullMQ and delivers them, and relays outbox events
 * that never reached the queue. Run as many as needed; they share PostgreSQL and Redis.
 */
async function main(config: Config) {
  if (!config.REDIS_URL || !config.DATABASE_URL) {
    exitWith('a worker needs REDIS_URL and DATABASE_URL (without Redis, `npm start` delivers in-process)');
  }
  const log = createLogger(config, 'worker');
  const { store } = await openStore(config);
  const metrics = createMetrics();
  const delivery = createDelivery(config, store, metrics, log);
  const settings = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX };
  const worker = startBullWorker(settings, delivery.handler, {
    concurrency: config.DELIVERY_CONCURRENCY,
    lockMs: config.WORKER_LOCK_MS,
  });
  worker.on('error', (error) => log.warn({ err: error }, 'worker connection problem; waiting for Redis'));
  worker.on('failed', (job, error) => log.error({ err: error, eventId: job?.data.eventId }, 'event job failed'));
  const producer = createBullProducer(settings);
  const relay = startOutboxRelay(store, producer, log);

  const metricsServer = config.WORKER_METRICS_PORT === undefined ? undefined : createServer((request, response) => {
    if (request.url !== '/metrics') return response.writeHead(404).end();
    void metrics.registry.metrics().then((text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text));
  }).listen(config.WORKER_METRICS_PORT, config.METRICS_HOST);

  log.info({ concurrency: config.DELIVERY_CONCURRENCY }, 'worker started');
  onShutdownSignal(log, config.SHUTDOWN_GRACE_MS, async () => {
    await worker.close(); // takes no new jobs, waits for the running ones
    await relay.stop();
    await producer.close();
    await delivery.poster.close();
    metricsServer?.close();
    await store.close();
  });
}

try {
  await main(loadConfig());
} catch (error) {
  if (error instanceof ConfigError) exitWith(error.message);
  throw error;
}
