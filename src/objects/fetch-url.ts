// Fetching a caller's URL for pull (docs/api.md, "Move, remove, pull"). Every connection goes through the
// egress guard's dispatcher, which checks the resolved address of each connection; redirects are followed
// here, by hand, so that every hop's URL is checked too (http or https, a host, no credentials) before the
// guard sees its address.
//
// Answers become FerryError kinds: 404 and 410 not_found; 401 and 403 invalid (the server refused);
// 429 and 503 throttled with Retry-After; 408 and other 5xx transient; other 4xx, a redirect without
// a Location and too many redirects invalid; refused connections, resets and timeouts transient.
// The body is a stream whose failures (a cut connection, fewer bytes than Content-Length, a body that
// stalls) surface as FerryError('transient'). Time bounds (docs/api.md, "Outbound calls"): the headers
// must come within FERRY_OUTBOUND_HEADERS_SECONDS, and the body must never pause longer than
// FERRY_OUTBOUND_IDLE_SECONDS; there is no bound on the whole body, since a large file takes long.
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import { request } from 'undici';
import { FerryError } from '../errors.js';
import type { Egress } from '../net/egress.js';
import { isAbort, parseRetryAfter } from '../net/failures.js';
import { OUTBOUND_DEFAULTS, type OutboundTimeouts, seconds } from '../net/time-bounds.js';

export interface FetchedUrl {
  body: Readable;
  /** From Content-Length, when the server sent one. */
  size?: number;
  /** Last path segment of the final URL, decoded; 'download' if empty. */
  name: string;
  mimeType?: string;
}

export interface OpenUrlOptions {
  signal?: AbortSignal;
  /** Redirects followed before giving up; default 5. */
  maxRedirects?: number;
  /** The wait for headers and the longest pause in the body; default OUTBOUND_DEFAULTS. */
  timeouts?: Pick<OutboundTimeouts, 'headersMs' | 'idleMs'>;
}

const DEFAULT_MAX_REDIRECTS = 5;

/**
 * The URL a pull may fetch: http or https, with a host, and no user name or password (they would be
 * stored with the transfer and could reach logs). Throws FerryError('invalid') otherwise.
 */
export function checkPullUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FerryError('invalid', `"${clip(url)}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new FerryError('invalid', `a pull URL must be http or https, not ${clip(parsed.protocol)}`);
  }
  if (parsed.hostname === '') throw new FerryError('invalid', 'a pull URL needs a host');
  if (parsed.username !== '' || parsed.password !== '') {
    throw new FerryError('invalid', 'a pull URL must not carry a user name or password');
  }
  return parsed;
}

/**
 * GETs `url` through the egress guard, following up to maxRedirects redirects, and returns the body as
 * a stream with what the answer says about it. Nothing is read from the body before it is returned.
 */
export async function openUrl(
  url: string,
  egress: Egress,
  options: OpenUrlOptions = {},
): Promise<FetchedUrl> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const { headersMs, idleMs } = options.timeouts ?? OUTBOUND_DEFAULTS;
  let current = checkPullUrl(url);
  for (let redirects = 0; ; redirects++) {
    const shown = display(current);
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(current, {
        method: 'GET',
        dispatcher: egress.dispatcher,
        // The bytes as served: a compressed transfer would be stored compressed.
        headers: { 'accept-encoding': 'identity', 'user-agent': 'ferry' },
        headersTimeout: headersMs,
        // undici's body timeout is the longest pause between two reads of the body, and it does not
        // run while the body waits for its reader (the destination's upload): a stall, not a total.
        bodyTimeout: idleMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (err) {
      throw connectionFailure(err, shown, headersMs);
    }
    const { statusCode: status, headers, body } = answer;

    if (status >= 200 && status < 300) {
      const length = header(headers['content-length']);
      const size = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
      const mimeType = header(headers['content-type']);
      return {
        body: guardBody(body, size, shown, idleMs),
        ...(size === undefined ? {} : { size }),
        name: nameFrom(current),
        ...(mimeType === undefined ? {} : { mimeType }),
      };
    }
    await body.dump().catch(() => undefined);

    if (status >= 300 && status < 400 && status !== 304) {
      const location = header(headers.location);
      if (location === undefined) {
        throw new FerryError('invalid', `GET ${shown}: the server answered ${status} without a Location`);
      }
      if (redirects >= maxRedirects) {
        throw new FerryError('invalid', `GET ${shown}: more than ${maxRedirects} redirects`);
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new FerryError('invalid', `GET ${shown}: the server redirected to something that is not a URL`);
      }
      current = checkPullUrl(next.href);
      continue;
    }
    throw statusFailure(status, headers, shown);
  }
}

function statusFailure(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  shown: string,
): FerryError {
  const what = `GET ${shown}: the server answered ${status}`;
  if (status === 404 || status === 410) return new FerryError('not_found', `${what}: no such file`);
  if (status === 401 || status === 403) {
    return new FerryError('invalid', `GET ${shown}: the server refused the request (HTTP ${status})`);
  }
  if (status === 429 || status === 503) {
    const retryAfterSeconds = parseRetryAfter(headers['retry-after']);
    return new FerryError('throttled', `${what}: try again later`, {
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
  }
  if (status >= 500 || status === 408) return new FerryError('transient', what);
  return new FerryError('invalid', what);
}

/** A request that got no answer: the egress guard's refusal (invalid) passes through; the rest is transient. */
function connectionFailure(err: unknown, shown: string, headersMs: number): unknown {
  if (err instanceof FerryError || isAbort(err)) return err;
  // undici may wrap what the connector reported (the guard's refusal) as the cause.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause instanceof FerryError) return cause;
  if ((err as { code?: unknown } | null)?.code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new FerryError('transient', `GET ${shown}: no answer within ${seconds(headersMs)}`, {
      cause: err,
    });
  }
  return new FerryError('transient', `GET ${shown}: connection failed (${describe(err)})`, { cause: err });
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The response body, re-emitting its failures as FerryError('transient') and checking the byte count
 * against Content-Length, so a cut connection never passes for a complete file.
 */
function guardBody(body: Readable, size: number | undefined, shown: string, idleMs: number): Readable {
  let seen = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (size !== undefined && seen > size) {
        callback(new FerryError('transient', `GET ${shown}: the body is longer than its Content-Length`));
        return;
      }
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      if (size !== undefined && seen !== size) {
        callback(
          new FerryError('transient', `GET ${shown}: the connection ended after ${seen} of ${size} bytes`),
        );
        return;
      }
      callback();
    },
  });
  body.on('error', (err) => {
    const stalled = (err as { code?: unknown }).code === 'UND_ERR_BODY_TIMEOUT';
    out.destroy(
      isAbort(err) || err instanceof FerryError
        ? err
        : new FerryError(
            'transient',
            stalled
              ? `GET ${shown}: the body stalled (no byte for ${seconds(idleMs)}) after ${seen} bytes`
              : `GET ${shown}: reading the body failed (${describe(err)})`,
            { cause: err },
          ),
    );
  });
  out.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  body.pipe(out);
  return out;
}

/** The file name a pull gives the object: the final URL's last path segment, decoded. */
export function nameFrom(url: URL): string {
  const raw = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    name = raw; // a malformed escape: keep the segment as written
  }
  // A decoded "/" would make folders of the name, "." and ".." would name no file: keep the encoding.
  if (name.includes('/') || name === '.' || name === '..') name = raw;
  return name === '' || name === '.' || name === '..' ? 'download' : name;
}

function header(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

/** A URL as messages show it: origin and path, never the query (it may hold a signature or token). */
function display(url: URL): string {
  return clip(`${url.origin}${url.pathname}`);
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Checks, before a pull is accepted, that the URL's host resolves only to addresses the egress guard allows
 * (such a URL is 400 at once: docs/api.md, "Move, remove, pull"). The fetch checks again on every connection,
 * so a DNS answer that changes later is still caught. An unknown host is invalid; a failing resolver
 * transient.
 */
export async function checkPullHost(url: URL, egress: Egress): Promise<void> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    egress.assertAllowed(host);
    return;
  }
  await new Promise<void>((resolve, reject) => {
    egress.lookup(host, { all: true }, (err) => {
      if (!err) resolve();
      else if (err instanceof FerryError) reject(err);
      else if (err.code === 'ENOTFOUND')
        reject(new FerryError('invalid', `the host ${clip(host)} was not found`));
      else
        reject(
          new FerryError('transient', `resolving ${clip(host)} failed (${describe(err)})`, { cause: err }),
        );
    });
  });
}
