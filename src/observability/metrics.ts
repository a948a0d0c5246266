import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per process role, so tests can build many apps without metrics colliding. */
export function createMetrics() {
  const registry = new Registry();
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Delivery attempts by outcome (delivered, failed, refused)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    deliveryDuration: new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one delivery POST, connect to response',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({ name: 'event_queue_depth', help: 'Event jobs waiting or running', registers: [registry] }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
