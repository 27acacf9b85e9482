// The background work of a worker process (FERRY_ROLE worker or all): the transfer worker, the OAuth
// refresher and, when FERRY_SMTP_URL is set, the send dispatcher, each woken by the other processes' signals (src/db/signals.ts) as well as by its own
// poll. `ferry serve` and the tests start it the same way.
import { Refresher, type RefresherOptions } from './domain/refresher/refresher.js';
import { SendDispatcher } from './domain/sends/dispatcher.js';
import { createWorker } from './engine/create.js';
import type { Worker, WorkerOptions } from './engine/worker.js';
import type { Services } from './services.js';

export interface Background {
  worker: Worker;
  refresher: Refresher;
  dispatcher: SendDispatcher | undefined;
  /** Stops listening and claiming; running transfers get `deadlineMs` to finish (Worker.stop). */
  stop(deadlineMs: number): Promise<void>;
}

export interface BackgroundOptions {
  worker?: Partial<WorkerOptions>;
  refresher?: Partial<RefresherOptions>;
  /** How often the send dispatcher looks at most (it also wakes when the next send is due). */
  sendPollMs?: number;
}

export function startBackground(services: Services, options: BackgroundOptions = {}): Background {
  const worker = createWorker(services, options.worker);
  const refresher = new Refresher(services.refresh, {
    pollMs: services.config.refresh.pollSeconds * 1000,
    ...options.refresher,
  });
  const dispatcher = services.mailer
    ? new SendDispatcher(
        {
          db: services.db,
          clock: services.clock,
          logger: services.logger.child({ component: 'send' }),
          shares: services.shares,
          mailer: services.mailer,
          owner: worker.owner,
          from: services.config.mail.from,
          registry: services.metrics,
        },
        { pollMs: options.sendPollMs ?? 30_000 },
      )
    : undefined;
  const unlisten = [
    services.signals.listen('work', () => {
      worker.nudge();
      dispatcher?.nudge();
    }),
    services.signals.listen('refresh', () => refresher.nudge()),
  ];
  worker.start();
  refresher.start();
  dispatcher?.start();
  return {
    worker,
    refresher,
    dispatcher,
    async stop(deadlineMs) {
      for (const stop of unlisten) stop();
      await dispatcher?.stop();
      await refresher.stop();
      await worker.stop(deadlineMs);
    },
  };
}
