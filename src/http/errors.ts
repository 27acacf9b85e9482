// The one place where error kinds become HTTP: every error is a value with a kind, and only this module knows
// which status each kind answers. Every error answers {error, message} (docs/api.md, "Errors"), except the
// ambiguous-name 409, whose body travels on the error. 5xx details are logged, never sent.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { databaseUnavailable, unavailableMessage } from '../db/unavailable.js';
import { boundMessage, type ErrorKind, FerryError } from '../errors.js';
import { PATTERN_RULES } from './schemas.js';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unsupported: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  stalled: 408,
  conflict: 409,
  credentials_rejected: 409,
  gone: 410,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  transient: 502,
  throttled: 503,
  unavailable: 503,
};

/** What a throttled answer tells the caller to wait when the provider did not say. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function describeValidation(context: string | undefined, issue: AjvIssue): string {
  const where = `${context ?? 'body'}${issue.instancePath.replace(/\//g, '.')}`;
  switch (issue.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown field "${String(issue.params.additionalProperty)}"`;
    case 'required':
      return `${where} is missing the field "${String(issue.params.missingProperty)}"`;
    case 'minLength':
      return issue.params.limit === 1 ? `${where} must not be empty` : `${where} ${issue.message}`;
    case 'pattern':
      return `${where} ${PATTERN_RULES[String(issue.params.pattern)] ?? issue.message}`;
    default:
      return `${where} ${issue.message ?? 'is not valid'}`;
  }
}

/**
 * The issue to report. Each branch of a union (a string or a list of them) fails on its own: the deepest
 * issue names the field, and at equal depth a branch's `type` issue only says that branch does not apply.
 */
function mostSpecific(issues: AjvIssue[]): AjvIssue | undefined {
  const rank = (issue: AjvIssue) => issue.instancePath.length * 2 + (issue.keyword === 'type' ? 0 : 1);
  let best: AjvIssue | undefined;
  for (const issue of issues) {
    if (issue.keyword === 'anyOf') continue;
    if (best === undefined || rank(issue) > rank(best)) best = issue;
  }
  return best ?? issues[0];
}

export function send(
  reply: FastifyReply,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return sendBody(reply, status, { error: status, message: boundMessage(message) }, headers);
}

function sendBody(reply: FastifyReply, status: number, body: unknown, headers: Record<string, string> = {}) {
  // A request refused before its body was read (no key, an unknown path, a wrong content type) ends its
  // connection: otherwise Node reads the unread body to reuse the connection, at whatever pace the
  // client sends it (docs/api.md, "HTTP connections and bodies").
  if (reply.request.raw.complete === false) reply.header('connection', 'close');
  // Error bodies bypass the route's response serializer: the shape is fixed here, for every route.
  return reply
    .code(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body);
}

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What an answer while the database is away tells the caller to wait. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * The database that cannot answer now (PostgreSQL away or restarting, SQLite's lock held past every
 * retry: src/db/unavailable.ts) as an error of kind unavailable, so it answers 503 with Retry-After
 * rather than 500 (docs/api.md, "The database going away"). The driver's words, which name the host,
 * stay in the log.
 */
function asKnown(err: unknown): unknown {
  if (err instanceof FerryError) return err;
  const why = databaseUnavailable(err);
  if (why === undefined) return err;
  return new FerryError('unavailable', unavailableMessage(why), {
    cause: err,
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
  });
}

/** What an error answers: errorHandler sends it, and src/http/auth.ts sends it in place of an answer. */
export function errorAnswer(thrown: unknown, request: FastifyRequest): ErrorAnswer {
  const err = asKnown(thrown);
  const plain = (status: number, message: string, headers: Record<string, string> = {}) => ({
    status,
    headers,
    body: { error: status, message: boundMessage(message) },
  });
  if (err instanceof FerryError) {
    const status = STATUS[err.kind];
    const headers: Record<string, string> = {};
    // A throttled answer always says when to come back: the provider's own wait, or ours.
    const retryAfter =
      err.retryAfterSeconds ?? (err.kind === 'throttled' ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
    if (err.kind === 'unauthenticated') {
      headers['www-authenticate'] = 'Bearer';
      // Nothing of a refused request's body is read: the connection ends with the answer, so a client
      // without a key cannot hold it open (docs/api.md, "HTTP connections and bodies").
      headers.connection = 'close';
    }
    if (status >= 500) request.log.error({ err }, 'request failed');
    if (err.body) return { status, headers, body: err.body };
    return plain(status, status === 500 ? 'internal error' : err.message, headers);
  }
  const fastifyError = err as FastifyError & { validationContext?: string };
  if (fastifyError.validation) {
    const first = mostSpecific(fastifyError.validation as unknown as AjvIssue[]);
    const message = first
      ? describeValidation(fastifyError.validationContext, first)
      : 'the request is not valid';
    return plain(400, message);
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return plain(status, fastifyError.message);
  }
  request.log.error({ err }, 'request failed');
  return plain(500, 'internal error');
}

export function errorHandler(err: FastifyError | FerryError, request: FastifyRequest, reply: FastifyReply) {
  const answer = errorAnswer(err, request);
  return sendBody(reply, answer.status, answer.body, answer.headers);
}

/**
 * Unknown paths answer 404, known paths with another method 405 with Allow (docs/api.md, "Errors"). Fastify's
 * own router answers 404 for both, so the routes are mirrored here to tell them apart.
 */
export class MethodTable {
  // No length limit on a parameter here: the table also answers for paths Fastify's router refused.
  readonly #router = FindMyWay({ maxParamLength: Number.MAX_SAFE_INTEGER });
  readonly #methods = new Set<HTTPMethod>();

  add(method: string | string[], url: string, options: { public?: boolean } = {}): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      const upper = m.toUpperCase() as HTTPMethod;
      this.#methods.add(upper);
      this.#router.on(upper, url, () => {}, { public: options.public === true });
    }
  }

  allowed(path: string): HTTPMethod[] {
    return [...this.#methods].filter((m) => this.#router.find(m, path) !== null);
  }

  /**
   * Whether the route a path would take needs no API key. Percent signs are read as plain characters,
   * so a path whose encoding is broken still finds its route.
   */
  isPublic(method: string, path: string): boolean {
    const found = this.#router.find(method.toUpperCase() as HTTPMethod, path.replaceAll('%', '_'));
    return (found?.store as { public?: boolean } | undefined)?.public === true;
  }
}

/**
 * Fastify's frameworkErrors: a path the router refused before any hook ran. Broken percent-encoding
 * is 400 and a path parameter longer than any id or token can be is 404, both after the API key is
 * checked where the path needs one, as every other answer is (docs/api.md, "Errors").
 */
export function frameworkErrorHandler(
  table: MethodTable,
  authenticate: (header: string | undefined) => Promise<unknown>,
) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const answer = () => {
      if (err.code === 'FST_ERR_BAD_URL') {
        return send(reply, 400, `the path "${path}" is not valid percent-encoded UTF-8`);
      }
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, 404, `nothing is at ${path}`);
      return errorHandler(err, request, reply);
    };
    if (table.isPublic(request.method, path)) return answer();
    authenticate(request.headers.authorization).then(answer, (failure: unknown) =>
      errorHandler(failure as FerryError, request, reply),
    );
  };
}

export function notFoundHandler(table: MethodTable) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = table.allowed(path);
    if (allow.length > 0) {
      return send(reply, 405, `${request.method} is not allowed on ${path}`, { allow: allow.join(', ') });
    }
    return send(reply, 404, `no route ${request.method} ${path}`);
  };
}
