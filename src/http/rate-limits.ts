// The per-workspace rate limit on the routes that cost (docs/api.md, "Rate limits and caps"). A route
// names its bucket in its config (`rateLimit: 'list'`); the place is taken after the key is checked and
// the body has passed its schema, so a request refused as invalid (400, 413, 415) does not count, and
// before the handler spends anything. Each such route's OpenAPI answers gain the 429.
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { RateBucket } from '../config.js';
import type { RateLimits } from '../domain/rate-limit.js';
import { workspaceOf } from './auth.js';
import { errors } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The rate-limit bucket a request of this route takes a place in. */
    rateLimit?: RateBucket;
  }
}

export function registerRateLimits(app: FastifyInstance, limits: RateLimits): void {
  const take: preHandlerAsyncHookHandler = async (request) => {
    const bucket = request.routeOptions.config.rateLimit;
    if (bucket !== undefined) await limits.take(workspaceOf(request), bucket);
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === undefined) return;
    const preHandler = [route.preHandler ?? []].flat();
    route.preHandler = [take, ...preHandler];
    if (route.schema?.response && typeof route.schema.response === 'object') {
      (route.schema.response as Record<number, unknown>)[429] ??= errors(429)[429];
    }
  });
}
