// What a request body may be (docs/api.md, "Errors"): JSON sent as application/json, or nothing. An
// empty body is no body (job retry and cancel take none); any other content type is 415, refused before
// a byte of the body is read; JSON text holding a lone UTF-16 surrogate (an unpaired "\ud800" escape,
// which no store, database or e-mail can hold) is 400.
import type { FastifyBodyParser, FastifyRequest } from 'fastify';
import { invalid } from '../errors.js';

type Done = (err: Error | null, body?: unknown) => void;

/** The JSON parser: Fastify's own (with its prototype-poisoning checks), then the surrogate check. */
export function parseJsonBody(json: FastifyBodyParser<string>) {
  return (request: FastifyRequest, body: string | Buffer, done: Done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    json(request, text, (err, value) => {
      if (err) done(err);
      else if (SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(value)) {
        done(invalid('the body holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)'));
      } else done(null, value);
    });
  };
}

/** Any escape of a surrogate: only then can the parsed value hold a lone one (UTF-8 text cannot). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** In a /u expression a pair is one code point: only a surrogate standing alone matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Walks the value without recursion, so no nesting depth can overflow the stack. */
function holdsLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return true;
    } else if (Array.isArray(item)) {
      for (const inner of item) stack.push(inner);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, inner] of Object.entries(item)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(inner);
      }
    }
  }
  return false;
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
