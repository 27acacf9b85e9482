// `ferry serve`: build the services, then the HTTP app and/or the worker as FERRY_ROLE says, and shut
// down gracefully on SIGTERM/SIGINT: stop accepting requests and claiming work, let running work
// finish until the deadline, hand back the rest, close the database.
import { bootstrapIfEmpty } from './bootstrap.js';
import type { Config } from './config.js';
import { Refresher } from './domain/refresher/refresher.js';
import { createWorker } from './engine/create.js';
import type { Worker } from './engine/worker.js';
import { buildApp } from './http/app.js';
import type { Logger } from './log.js';
import { createServices } from './services.js';

export async function serve(config: Config, logger: Logger): Promise<void> {
  const services = await createServices(config, { logger });
  await bootstrapIfEmpty(services);
  const app = config.role === 'worker' ? undefined : await buildApp(services, { defaultMetrics: true });
  let worker: Worker | undefined;
  let refresher: Refresher | undefined;
  if (config.role !== 'api') {
    worker = createWorker(services);
    const running = worker;
    services.workQueued = () => running.nudge();
    worker.start();
    logger.info({ owner: worker.owner, concurrency: config.worker.concurrency }, 'worker started');
    const refreshing = new Refresher(services.refresh, { pollMs: config.refresh.pollSeconds * 1000 });
    services.refreshRequested = () => refreshing.nudge();
    refreshing.start();
    refresher = refreshing;
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(
      () => {
        logger.error('shutdown took too long; exiting');
        process.exit(1);
      },
      (config.worker.shutdownSeconds + 15) * 1000,
    );
    force.unref();
    try {
      await app?.close();
      await refresher?.stop();
      await worker?.stop(config.worker.shutdownSeconds * 1000);
      await services.close();
      logger.info('stopped');
    } finally {
      clearTimeout(force);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  if (app) {
    await app.listen({ host: config.host, port: config.port });
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    logger.info(
      {
        url: `http://${host}:${config.port}`,
        role: config.role,
        database: services.db.description,
        dataDir: config.dataDir,
      },
      'ferry is listening',
    );
  }
}
