// The background work of a worker process (FERRY_ROLE worker or all): the transfer worker and the
// OAuth refresher, each woken by the other processes' signals (src/db/signals.ts) as well as by its own
// poll. `ferry serve` and the tests start it the same way.
import { Refresher, type RefresherOptions } from './domain/refresher/refresher.js';
import { createWorker } from './engine/create.js';
import type { Worker, WorkerOptions } from './engine/worker.js';
import type { Services } from './services.js';

export interface Background {
  worker: Worker;
  refresher: Refresher;
  /** Stops listening and claiming; running transfers get `deadlineMs` to finish (Worker.stop). */
  stop(deadlineMs: number): Promise<void>;
}

export interface BackgroundOptions {
  worker?: Partial<WorkerOptions>;
  refresher?: Partial<RefresherOptions>;
}

export function startBackground(services: Services, options: BackgroundOptions = {}): Background {
  const worker = createWorker(services, options.worker);
  const refresher = new Refresher(services.refresh, {
    pollMs: services.config.refresh.pollSeconds * 1000,
    ...options.refresher,
  });
  const unlisten = [
    services.signals.listen('work', () => worker.nudge()),
    services.signals.listen('refresh', () => refresher.nudge()),
  ];
  worker.start();
  refresher.start();
  return {
    worker,
    refresher,
    async stop(deadlineMs) {
      for (const stop of unlisten) stop();
      await refresher.stop();
      await worker.stop(deadlineMs);
    },
  };
}
