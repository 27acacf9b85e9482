// The process's Prometheus registry, built with the services: the HTTP app, the worker, the refresher
// and the share and send code all count into it, and GET /metrics serves it. One per Services, so
// tests that build several apps each read their own.
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { MemoryBudget } from './stores/shared/memory.js';

export function createRegistry(): Registry {
  return new Registry();
}

/** Process-wide metrics (CPU, memory, event loop), once per process: the server turns them on. */
export function addProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, prefix: 'ferry_' });
}

/** The transfer memory budget (FERRY_TRANSFER_MEMORY), read when /metrics is scraped. */
export function transferMemoryMetrics(registry: Registry, memory: MemoryBudget): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('ferry_transfer_memory_bytes', 'Object bytes transfers hold in memory now', () => memory.used);
  gauge(
    'ferry_transfer_memory_peak_bytes',
    'The most object bytes held at once since the start',
    () => memory.peak,
  );
  gauge('ferry_transfer_memory_limit_bytes', 'FERRY_TRANSFER_MEMORY', () => memory.capacity);
  gauge('ferry_transfer_memory_waiting_parts', 'Parts waiting for room in the budget', () => memory.waiting);
}

/** Authentications answered from the process's cache and from the database (src/domain/auth-cache.ts). */
export function authCacheMetrics(registry: Registry, cache: { hits: number; misses: number }): void {
  new Counter({
    name: 'ferry_auth_lookups_total',
    help: 'API key authentications by where they were answered: cache or database',
    labelNames: ['from'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ from: 'cache' }, cache.hits);
      this.inc({ from: 'database' }, cache.misses);
    },
  });
}
