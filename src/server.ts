// `ferry serve`: build the services and the app, listen, and shut down gracefully on SIGTERM/SIGINT
// (stop accepting, finish requests in flight, close the database).
import { bootstrapIfEmpty } from './bootstrap.js';
import type { Config } from './config.js';
import { buildApp } from './http/app.js';
import type { Logger } from './log.js';
import { createServices } from './services.js';

export async function serve(config: Config, logger: Logger): Promise<void> {
  const services = await createServices(config, { logger });
  await bootstrapIfEmpty(services);
  const app = await buildApp(services, { defaultMetrics: true });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    try {
      await app.close();
      await services.close();
      logger.info('stopped');
    } finally {
      clearTimeout(force);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
  logger.info(
    {
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
      database: services.db.description,
      dataDir: config.dataDir,
    },
    'ferry is listening',
  );
}
