// Bearer authentication (docs/api.md, "Authentication"). Every route checks the API key first unless it is
// declared public (config.public), and so does the 404/405 handler: without a valid key every other path
// answers 401.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeys, Principal } from '../domain/api-keys.js';
import { FerryError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No API key needed (health, metrics, OpenAPI, share links). */
    public?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function bearerToken(header: string | undefined): string {
  const match = header === undefined ? null : /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new FerryError('unauthenticated', 'send the API key as "Authorization: Bearer <key>"');
  }
  return match[1];
}

export function registerAuth(app: FastifyInstance, apiKeys: ApiKeys): void {
  app.decorateRequest('principal', null);
  // A callback hook, not an async one: public routes (health, share links) pass without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config?.public === true) return done();
    let token: string;
    try {
      token = bearerToken(request.headers.authorization);
    } catch (err) {
      return done(err as Error);
    }
    apiKeys.authenticate(token).then(
      (principal) => {
        request.principal = principal;
        done();
      },
      (err: Error) => done(err),
    );
  });
}

/** The caller's workspace; routes behind auth always have one. */
export function workspaceOf(request: FastifyRequest): string {
  if (!request.principal) throw new FerryError('unauthenticated', 'no API key');
  return request.principal.workspaceId;
}
