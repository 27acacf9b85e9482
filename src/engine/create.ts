// A worker wired to a process's services.
import type { Services } from '../services.js';
import { StoreCache } from './store-cache.js';
import { Worker, type WorkerOptions, workerId } from './worker.js';

export function createWorker(services: Services, options: Partial<WorkerOptions> = {}): Worker {
  const { db, clock, logger, storage, stores, config } = services;
  return new Worker(
    {
      db,
      clock,
      logger: logger.child({ component: 'worker' }),
      stores: new StoreCache(db.kysely, storage, clock),
      owner: workerId(),
      egress: stores.egress,
    },
    {
      concurrency: config.worker.concurrency,
      perLocation: config.worker.perLocation,
      leaseMs: config.worker.leaseSeconds * 1000,
      ...options,
    },
  );
}
