// HTTP request metrics, counted into the process's registry (src/metrics.ts). The app's one
// onResponse hook (src/http/app.ts) calls the observer after writing the request's log line.
import { Counter, Histogram, type Registry } from 'prom-client';

export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

export function requestMetrics(registry: Registry): ObserveRequest {
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
  // The labelled children, looked up once per (method, route, status) rather than hashed from a label
  // object on every request. Routes are patterns and statuses few, so the map stays small.
  const children = new Map<string, { count: () => void; time: (seconds: number) => void }>();
  return (method, route, status, seconds) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      const counter = requests.labels(method, route, String(status));
      const histogram = duration.labels(method, route);
      child = { count: () => counter.inc(), time: (s) => histogram.observe(s) };
      children.set(key, child);
    }
    child.count();
    child.time(seconds);
  };
}
