// `ferry serve`: build the services, then the HTTP app and/or the worker as FERRY_ROLE says, and shut
// down gracefully on SIGTERM/SIGINT: stop accepting requests and claiming work, let running work
// finish until the deadline, hand back the rest, close the database.

import type { FastifyInstance } from 'fastify';
import { type Background, startBackground } from './background.js';
import { bootstrapIfEmpty } from './bootstrap.js';
import type { Config } from './config.js';
import { looseDataDirMode, octal, PRIVATE_UMASK } from './data-dir.js';
import { limitHeapGrowth } from './heap.js';
import { buildApp } from './http/app.js';
import type { Logger } from './log.js';
import { createServices, type Services } from './services.js';
import { preloadSdks } from './stores/shared/sdk.js';

export async function serve(config: Config, logger: Logger): Promise<void> {
  limitHeapGrowth();
  // Everything the server creates is its own account's only (docs/api.md, "Files on disk").
  process.umask(PRIVATE_UMASK);
  const loose = looseDataDirMode(config.dataDir);
  if (loose !== undefined) {
    logger.warn(
      { dataDir: config.dataDir, mode: octal(loose) },
      'the data dir can be read by other users; ferry leaves it as it is: chmod 700 it',
    );
  }
  const services = await createServices(config, { logger });
  await bootstrapIfEmpty(services);
  const app = config.role === 'worker' ? undefined : await buildApp(services, { defaultMetrics: true });
  let background: Background | undefined;
  if (config.role !== 'api') {
    background = startBackground(services);
    logger.info({ owner: background.worker.owner, concurrency: config.worker.concurrency }, 'worker started');
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
      await background?.stop(config.worker.shutdownSeconds * 1000);
      await services.close();
      logger.info('stopped');
    } finally {
      clearTimeout(force);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  if (app) {
    const url = await listen(app, config);
    logger.info(
      {
        url,
        role: config.role,
        database: services.db.description,
        dataDir: config.dataDir,
      },
      'ferry is listening',
    );
  }
  await preloadLocationSdks(services, logger);
}

/**
 * Listens where FERRY_HOST and FERRY_PORT say; answers the address bound, `http://HOST:PORT`. Under
 * FERRY_PORT=0 the port is the system's choice, known only now: without FERRY_PUBLIC_URL, the links
 * ferry makes (config.publicUrl, read at each share) follow it. The tests start every server so.
 */
export async function listen(app: FastifyInstance, config: Config): Promise<string> {
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  if (config.publicUrlFollowsPort) config.publicUrl = url;
  return url;
}

/**
 * Loads the SDKs of the providers the locations use (src/stores/shared/sdk.ts), now that requests are
 * answered, so that the first request or transfer that opens such a store does not wait for one.
 * Should the database not answer, each loads on its first use instead.
 */
async function preloadLocationSdks(services: Services, logger: Logger): Promise<void> {
  try {
    const rows = await services.db.kysely.selectFrom('locations').select('provider').distinct().execute();
    preloadSdks(rows.map((row) => row.provider));
  } catch (err) {
    logger.warn({ err }, 'could not read which providers the locations use; their SDKs load on first use');
  }
}
