// Service endpoints without authentication (docs/api.md, "Service endpoints (no API key)").
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Db } from '../../db/database.js';
import { ping } from '../../db/database.js';
import { send } from '../errors.js';

export function serviceRoutes(app: FastifyInstance, deps: { db: Db; registry: Registry }): void {
  const open = { config: { public: true }, schema: { hide: true } };

  app.get('/healthz', open, async () => ({ status: 'ok' }));

  // A load balancer probes every few seconds: one line when the database stops answering, one when it
  // answers again, as the background loops say (docs/api.md, "The database going away").
  let unready = false;
  app.get('/readyz', open, async (request, reply) => {
    try {
      await ping(deps.db);
      if (unready) {
        unready = false;
        request.log.info('readyz: the database answers again');
      }
      return { status: 'ready' };
    } catch (err) {
      if (!unready) {
        unready = true;
        request.log.warn({ err }, 'readyz: the database is not reachable');
      }
      return send(reply, 503, 'the database is not reachable');
    }
  });

  app.get('/metrics', open, async (_request, reply) => {
    const body = await deps.registry.metrics();
    return reply.type(deps.registry.contentType).send(body);
  });

  app.get('/openapi.json', open, async () => app.swagger());
}
