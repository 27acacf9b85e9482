// What a request body may be (docs/api.md, "Errors"): JSON sent as application/json, or nothing. An
// empty body is no body (job retry and cancel take none: noBody); any other content type is 415,
// refused before a byte of the body is read. The one exception is an upload through PUT /v1/files/…,
// whose plugin has a parser of its own that leaves any body unread for the route to stream
// (src/http/routes/files.ts). What the JSON holds is checked by src/http/input.ts.
import type { FastifyBodyParser, FastifyRequest } from 'fastify';
import { invalid } from '../errors.js';

type Done = (err: Error | null, body?: unknown) => void;

/**
 * The JSON parser: Fastify's own (with its prototype-poisoning checks), with an empty body as no body.
 * A lone surrogate in what it parsed is refused by src/http/input.ts, which names the field.
 */
export function parseJsonBody(json: FastifyBodyParser<string>) {
  return (request: FastifyRequest, body: string | Buffer, done: Done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') done(null, undefined);
    else json(request, text, done);
  };
}

/** Every content type without a parser of its own: an empty body is no body, anything else is 415. */
export function refuseOtherBodies(request: FastifyRequest, _payload: unknown, done: Done): void {
  const { headers } = request;
  if (headers['transfer-encoding'] === undefined && headers['content-length'] === '0') {
    done(null, undefined);
    return;
  }
  const type = headers['content-type'];
  const err = new Error(
    type === undefined
      ? 'send the body as JSON with "Content-Type: application/json" (the request had no Content-Type)'
      : `send the body as JSON with "Content-Type: application/json", not "${type}"`,
  );
  done(Object.assign(err, { statusCode: 415 }));
}

/** Job retry and cancel take no body: nothing, or {} (docs/api.md, "Polling"). */
export function noBody(request: FastifyRequest): void {
  const body = request.body;
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw invalid('this operation takes no body (send nothing, or {})');
}
