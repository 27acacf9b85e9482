// Bearer authentication (docs/api.md, "Authentication"). Every route checks the API key first unless it is
// declared public (config.public), and so does the 404/405 handler: without a valid key every other path
// answers 401.
//
// A read (GET, HEAD) whose key is in the cache does not wait for the cache's barrier (docs/engine.md,
// "Authentication cache") before its handler: the handler runs with the cached principal while the
// barrier's round trip is in flight, and the answer waits for the confirmation in onSend, before any of
// its bytes leave. Unconfirmed, it is replaced whole by the error authentication would have answered
// (a stream is destroyed). So a read's handler may run for a key revoked a moment before, but nothing it
// found is sent, and it must change nothing: the authenticated GET routes only read. Writes, and routes
// that set config.authFirst, start only once the key is confirmed, as do routes that bypass onSend
// (reply.hijack(), writing reply.raw): they must set authFirst.
//
// Scopes (docs/api.md, "Scopes"): every route that is not public declares the scope it needs
// (config.scope), checked here before its handler and nowhere else; a route that declares none stops
// the server at start-up. A request whose key lacks the scope is 403 naming it. A request may need two
// (a sync that deletes: `transfer` and `remove`); the first one the key lacks is named.
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Scope } from '../api/keys.js';
import type { ApiKeys, Principal } from '../domain/api-keys.js';
import { FerryError } from '../errors.js';
import { markKeyed } from './connections.js';
import { errorAnswer } from './errors.js';
import { errors } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No API key needed (health, metrics, OpenAPI, share links). */
    public?: boolean;
    /**
     * The route acts on the whole workspace (a new location, webhooks, the audit log): a key limited to
     * some locations is refused with 403 (docs/api.md, "Scopes").
     */
    wholeWorkspace?: boolean;
    /**
     * A GET whose handler starts only once the key is confirmed: it holds something beyond its answer
     * (an event stream's slot), or uses the principal's locations_version.
     */
    authFirst?: boolean;
    /** Set by registerAuth on the routes whose reads may start early (they carry its onSend hook). */
    earlyRead?: boolean;
    /**
     * The scope the key needs (docs/api.md, "Scopes"), the scopes it needs all of, or how the request
     * chooses them (a dry run or a preview is a read; a plan's run needs what its kind does; a sync
     * that deletes needs `remove` too). Required on every route not public.
     */
    scope?: Needs | 'any' | ((request: FastifyRequest) => Needs | Promise<Needs>);
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

type Confirmation = { principal: Principal } | { err: unknown };

/** What a request needs of its key: a scope, or every one of several. */
export type Needs = Scope | readonly Scope[];

/** Why the request's key may not do what the route does with `needs`, or undefined when it may. */
function refusal(request: FastifyRequest, needs: Needs): FerryError | undefined {
  const principal = principalOf(request);
  const lacking = (typeof needs === 'string' ? [needs] : needs).find((s) => !principal.scopes.has(s));
  if (lacking !== undefined) return missingScope(lacking);
  if (request.routeOptions.config?.wholeWorkspace === true && principal.locations !== null) {
    return new FerryError(
      'forbidden',
      'this API key is limited to some locations; this request acts on the whole workspace (docs/api.md, "Scopes")',
    );
  }
  return undefined;
}

export function registerAuth(app: FastifyInstance, apiKeys: ApiKeys): void {
  app.decorateRequest('principal', null);
  /** The reads that started before their key was confirmed, and the confirmation each awaits. */
  const pending = new WeakMap<FastifyRequest, Promise<Confirmation>>();
  // A callback hook, not an async one: public routes (health, share links) pass without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const config = request.routeOptions.config;
    if (config?.public === true) return done();
    let token: string;
    try {
      token = bearerToken(request.headers.authorization);
    } catch (err) {
      return done(err as Error);
    }
    const read = request.method === 'GET' || request.method === 'HEAD';
    const early = read && config?.earlyRead === true ? apiKeys.early(token) : undefined;
    if (early) {
      request.principal = early.principal;
      markKeyed(request.raw.socket);
      pending.set(
        request,
        early.confirmed.then(
          (principal) => ({ principal }),
          (err: unknown) => ({ err }),
        ),
      );
      return done();
    }
    apiKeys.authenticate(token).then(
      (principal) => {
        request.principal = principal;
        markKeyed(request.raw.socket);
        done();
      },
      (err: Error) => done(err),
    );
  });
  // Before the first byte of a read that started early: its key confirmed, or its answer replaced.
  const holdAnswer: onSendHookHandler = (request, reply, payload, done) => {
    const confirmation = pending.get(request);
    if (confirmation === undefined) return done(null, payload);
    pending.delete(request);
    confirmation.then((result) => {
      const early = request.principal;
      if ('principal' in result) {
        const { principal } = result;
        if (principal.keyId === early?.keyId && principal.workspaceId === early.workspaceId) {
          request.principal = principal;
          return done(null, payload);
        }
      }
      const err =
        'err' in result
          ? result.err
          : new FerryError('unavailable', 'the API key changed during the request; retry', {
              retryAfterSeconds: 1,
            });
      const answer = errorAnswer(err, request);
      if (typeof (payload as Readable | null)?.destroy === 'function') (payload as Readable).destroy();
      for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
      reply.code(answer.status).headers(answer.headers).type('application/json; charset=utf-8');
      done(null, JSON.stringify(answer.body));
    });
  };
  // The scope, before the body is validated (a key without it learns nothing of the route's rules) and
  // once it is parsed (a dry run is chosen by its body).
  // A callback hook: a route with a fixed scope (all but a few) is checked without a promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const needs = request.routeOptions.config?.scope;
    if (request.routeOptions.config?.public === true || needs === undefined || needs === 'any') return done();
    if (typeof needs !== 'function') return done(refusal(request, needs));
    Promise.resolve(needs(request)).then(
      (scopes) => done(refusal(request, scopes)),
      (err: Error) => done(err),
    );
  });
  // Only the routes a read may start early on carry the hook, and only they take the early path: a
  // public route's answer (/healthz's) runs no onSend hook at all.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (route.config?.public !== true && route.config?.scope === undefined) {
      throw new Error(
        `${methods.join(',')} ${route.url} declares no scope (config.scope; docs/api.md, "Scopes")`,
      );
    }
    // Every route behind a key may answer 403 (a scope the key lacks): /openapi.json says so.
    const responses = route.schema?.response as Record<string, unknown> | undefined;
    if (route.config?.public !== true && responses !== undefined && responses[403] === undefined) {
      responses[403] = errors(403)[403];
    }
    if (route.config?.public === true || route.config?.authFirst === true) return;
    if (!methods.some((method) => method === 'GET' || method === 'HEAD')) return;
    const onSend = [route.onSend ?? []].flat();
    if (!onSend.includes(holdAnswer)) route.onSend = [...onSend, holdAnswer];
    route.config = { ...route.config, earlyRead: true };
  });
}

/** The caller's workspace; routes behind auth always have one. */
export function workspaceOf(request: FastifyRequest): string {
  return principalOf(request).workspaceId;
}

/** The caller's key and workspace; routes behind auth always have them. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new FerryError('unauthenticated', 'no API key');
  return request.principal;
}

/** The 403 of a key without `scope`. */
export function missingScope(scope: Scope): FerryError {
  return new FerryError('forbidden', `this API key lacks the "${scope}" scope (docs/api.md, "Scopes")`);
}

/** A read when the body asks only to look (`dry_run: true`, a preview), else `needs`. */
export function readWhenDryRun(needs: Needs): (request: FastifyRequest) => Needs {
  return (request) =>
    (request.body as { dry_run?: unknown } | undefined)?.dry_run === true ? 'read' : needs;
}

/**
 * What work that may delete needs (docs/api.md, "Scopes"): `transfer`, and `remove` as well when it
 * deletes (a sync with `delete: true`, a plan or a schedule of one).
 */
export function deleting(deletes: boolean): Needs {
  return deletes ? ['transfer', 'remove'] : 'transfer';
}

/** Whether a sync's body asks to delete (read before its schema is checked: anything may be there). */
export function syncDeletes(body: unknown): boolean {
  return (body as { delete?: unknown } | null | undefined)?.delete === true;
}
