// HTTP request metrics, counted into the process's registry (src/metrics.ts).
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

export function registerMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'ferry_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ferry_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: paths can carry share tokens and ids without bound.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
}
