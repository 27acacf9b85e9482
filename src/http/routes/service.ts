// Service endpoints without authentication (docs/api.md, "Service endpoints (no API key)").
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Db } from '../../db/database.js';
import { ping } from '../../db/database.js';
import { send } from '../errors.js';

export function serviceRoutes(app: FastifyInstance, deps: { db: Db; registry: Registry }): void {
  const open = { config: { public: true }, schema: { hide: true } };

  app.get('/healthz', open, async () => ({ status: 'ok' }));

  app.get('/readyz', open, async (request, reply) => {
    try {
      await ping(deps.db);
      return { status: 'ready' };
    } catch (err) {
      request.log.warn({ err }, 'database not reachable');
      return send(reply, 503, 'the database is not reachable');
    }
  });

  app.get('/metrics', open, async (_request, reply) => {
    const body = await deps.registry.metrics();
    return reply.type(deps.registry.contentType).send(body);
  });

  app.get('/openapi.json', open, async () => app.swagger());
}
