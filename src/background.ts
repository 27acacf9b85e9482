// The background work of a worker process (FERRY_ROLE worker or all), wired to the process's services:
// the transfer worker, the OAuth refresher, the webhook deliverer, the retention pruner (unless
// FERRY_RETENTION_DAYS keeps everything), the scheduler and, when FERRY_SMTP_URL is set, the send dispatcher, each
// woken by the other processes' signals (src/db/signals.ts) as well as by its own poll. `ferry serve`
// and the tests start it the same way. It holds a slot of the data dir for the process's life
// (src/queue/predecessor.ts): the leases of the process that held the slot before, which has exited,
// end at once, so work a killed process held resumes when it is restarted, not when its leases run out.
import { Refresher, type RefresherOptions } from './domain/refresher/refresher.js';
import { Pruner, type PrunerOptions } from './domain/retention/pruner.js';
import { Scheduler, type SchedulerOptions } from './domain/schedules/scheduler.js';
import { SendDispatcher } from './domain/sends/dispatcher.js';
import { type DelivererOptions, WebhookDeliverer } from './domain/webhooks/deliverer.js';
import { StoreCache } from './engine/store-cache.js';
import { Worker, type WorkerOptions, workerId } from './engine/worker.js';
import { outboundTimeouts } from './net/time-bounds.js';
import { endLeasesOf } from './queue/leases.js';
import { takeWorkerSlot, type WorkerSlot } from './queue/predecessor.js';
import type { Services } from './services.js';

export interface Background {
  worker: Worker;
  refresher: Refresher;
  dispatcher: SendDispatcher | undefined;
  webhooks: WebhookDeliverer;
  /**
   * Deletes old finished work (docs/api.md, "Retention") and old audit events; undefined when both
   * FERRY_RETENTION_DAYS and FERRY_AUDIT_RETENTION_DAYS are 0.
   */
  pruner: Pruner | undefined;
  /** Starts the schedules' runs when due (docs/api.md, "Schedules"). */
  scheduler: Scheduler;
  /** Stops listening and claiming; running transfers get `deadlineMs` to finish (Worker.stop). */
  stop(deadlineMs: number): Promise<void>;
}

export interface BackgroundOptions {
  worker?: Partial<WorkerOptions>;
  refresher?: Partial<RefresherOptions>;
  /** How often the send dispatcher looks at most (it also wakes when the next send is due). */
  sendPollMs?: number;
  /** The webhook deliverer's options over those of the settings (FERRY_WEBHOOK_…). */
  webhooks?: Partial<DelivererOptions>;
  /** The pruner's options over those of the settings (FERRY_RETENTION_DAYS). */
  retention?: Partial<PrunerOptions>;
  /** The scheduler's options (docs/api.md, "Schedules"). */
  schedules?: Partial<SchedulerOptions>;
}

/** How often, at most, this process wakes the event streams (docs/api.md, "Live progress"). */
const CHANGES_INTERVAL_MS = 250;

function streamWaker(services: Services): () => void {
  return () => services.signals.notifyAtMost('changes', CHANGES_INTERVAL_MS);
}

function createWorker(services: Services, options: Partial<WorkerOptions> = {}): Worker {
  const { db, clock, logger, storage, stores, config } = services;
  return new Worker(
    {
      db,
      clock,
      logger: logger.child({ component: 'worker' }),
      stores: new StoreCache(db.kysely, storage, clock),
      owner: workerId(),
      egress: stores.egress,
      outbound: outboundTimeouts(config.outbound),
      wakeStreams: streamWaker(services),
      crashes: { max: config.crashedWork.maxCrashes },
      bandwidth: services.bandwidth,
    },
    {
      concurrency: config.worker.concurrency,
      perLocation: config.worker.perLocation,
      perWorkspace: config.worker.perWorkspace,
      leaseMs: config.worker.leaseSeconds * 1000,
      ...options,
    },
  );
}

/**
 * This process's slot in the data dir, with its lease owners recorded before anything is claimed (and
 * the predecessor's beside them until their leases are ended); undefined when there is none to take.
 */
function takeSlot(services: Services, owners: string[]): WorkerSlot | undefined {
  const { config, logger } = services;
  let slot: WorkerSlot | undefined;
  try {
    slot = takeWorkerSlot(config.dataDir);
  } catch (err) {
    logger.warn(
      { err, dataDir: config.dataDir },
      'no worker slot in the data dir: a restart waits for the leases to run out',
    );
    return undefined;
  }
  if (slot === undefined) {
    logger.warn(
      { dataDir: config.dataDir },
      'every worker slot of the data dir is held: a restart waits for the leases to run out',
    );
    return undefined;
  }
  slot.record([...owners, ...slot.predecessors]);
  return slot;
}

export function startBackground(services: Services, options: BackgroundOptions = {}): Background {
  const worker = createWorker(services, options.worker);
  const owners = [worker.owner, services.refresh.owner];
  const slot = takeSlot(services, owners);
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
          wakeStreams: streamWaker(services),
          crashes: { max: services.config.crashedWork.maxCrashes },
        },
        { pollMs: options.sendPollMs ?? 30_000 },
      )
    : undefined;
  const webhooks = new WebhookDeliverer(
    {
      db: services.db,
      clock: services.clock,
      logger: services.logger.child({ component: 'webhook' }),
      keyring: services.keyring,
      egress: services.stores.egress,
      owner: worker.owner,
      registry: services.metrics,
    },
    {
      timeoutMs: services.config.outbound.webhookTimeoutSeconds * 1000,
      concurrency: services.config.outbound.webhookConcurrency,
      perEndpoint: services.config.outbound.webhookEndpointConcurrency,
      maxCrashes: services.config.crashedWork.maxCrashes,
      ...options.webhooks,
    },
  );
  const days = services.config.retentionDays;
  const auditDays = services.config.auditRetentionDays;
  const pruner =
    days === undefined && auditDays === undefined
      ? undefined
      : new Pruner(
          {
            db: services.db,
            clock: services.clock,
            logger: services.logger.child({ component: 'retention' }),
            owner: worker.owner,
            registry: services.metrics,
          },
          {
            retentionMs: days === undefined ? undefined : days * 86_400_000,
            auditRetentionMs: auditDays === undefined ? undefined : auditDays * 86_400_000,
            ...options.retention,
          },
        );
  const scheduler = new Scheduler(
    {
      db: services.db,
      clock: services.clock,
      logger: services.logger.child({ component: 'scheduler' }),
      runner: services.scheduleRunner,
      owner: worker.owner,
      queued: () => services.workQueued(),
    },
    options.schedules,
  );
  const unlisten = [
    services.signals.listen('work', () => {
      worker.nudge();
      dispatcher?.nudge();
    }),
    services.signals.listen('schedules', () => scheduler.nudge()),
    services.signals.listen('refresh', () => refresher.nudge()),
    services.signals.listen('cancel', () => worker.cancelSeen()),
    services.signals.listen('webhook', () => webhooks.nudge()),
  ];
  worker.start();
  refresher.start();
  dispatcher?.start();
  webhooks.start();
  pruner?.start();
  scheduler.start();
  const predecessors = slot?.predecessors ?? [];
  const endedLeases =
    slot === undefined || predecessors.length === 0
      ? Promise.resolve()
      : endLeasesOf(services.db.kysely, predecessors)
          .then((ended) => {
            slot.record(owners);
            // A predecessor that stopped cleanly handed everything back: nothing to say or to wake.
            if (ended === 0) return;
            services.logger.info(
              { slot: slot.index, predecessors, ended },
              "took back at once the work of this data dir's previous process, which has exited",
            );
            worker.maintainNow();
            scheduler.nudge();
            refresher.nudge();
            dispatcher?.nudge();
            webhooks.nudge();
          })
          .catch((err: unknown) => {
            // Left recorded: the next process of this slot ends them, or they run out meanwhile.
            services.logger.warn({ err, predecessors }, "could not end the previous process's leases");
          });
  return {
    worker,
    refresher,
    dispatcher,
    webhooks,
    pruner,
    scheduler,
    async stop(deadlineMs) {
      for (const stop of unlisten) stop();
      await scheduler.stop();
      await pruner?.stop();
      await dispatcher?.stop();
      await webhooks.stop();
      await refresher.stop();
      await worker.stop(deadlineMs);
      await endedLeases;
      // Last: everything was handed back, and nothing of this process claims any more.
      slot?.release();
    },
  };
}
