// The process's Prometheus registry, built with the services: the HTTP app, the worker, the refresher
// and the share and send code all count into it, and GET /metrics serves it. One per Services, so
// tests that build several apps each read their own.
import { collectDefaultMetrics, Registry } from 'prom-client';

export function createRegistry(): Registry {
  return new Registry();
}

/** Process-wide metrics (CPU, memory, event loop), once per process: the server turns them on. */
export function addProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, prefix: 'ferry_' });
}
