// The HTTP client the OAuth stores (dropbox, drive, onedrive, box) build their provider calls on:
// one undici Agent per store, the bearer access token read from the location's token source at each
// request (revealed only here, where the request is built), JSON in and out, streamed bodies for
// content, AbortSignal, and one attempt per call (stores never retry), with one exception: a 401 has
// the token renewed once and the call repeated once, since an access token can expire or be replaced
// between two requests. A non-2xx answer is read (at most 64 KiB) and handed to the provider's
// errors.ts, which alone knows the provider's error shapes. Every connection goes through the egress
// guard, which trusts only the provider's own origins (the operator's settings): a URL a provider
// hands back (a redirect's Location, an upload session) is checked like any caller's, and the token
// is sent to the provider's own origins only (docs/api.md, "Outbound calls"). Redirects are never
// followed here; a store that expects one reads it (`accept`) and decides.
//
// Time bounds (docs/api.md, "Outbound calls"): every call waits at most `headersMs` for the headers and
// `idleMs` between two bytes of a body; a call whose answer is read whole (json(), an error answer, a
// body read with readText()) is also bounded as a whole by `answerMs`, while a body streamed onwards (a
// download) is not, since a large file legitimately takes long. A call cut off by a bound is transient.
import { PassThrough, type Readable } from 'node:stream';
import { Agent, type Dispatcher, request } from 'undici';
import { type ErrorKind, FerryError, invalid } from '../../errors.js';
import type { Egress } from '../../net/egress.js';
import { networkFailure, parseRetryAfter } from '../../net/failures.js';
import { type Deadline, deadline, OUTBOUND_DEFAULTS, type OutboundTimeouts } from '../../net/time-bounds.js';
import type { ProviderSecret } from '../../providers.js';
import { Secret } from '../../secret.js';
import type { AccessTokenSource, StoreContext, StoreLocation } from '../context.js';

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** A non-2xx answer, as the provider's errors.ts receives it. */
export interface ErrorResponse {
  status: number;
  headers: ResponseHeaders;
  /** The body as text (at most 64 KiB). */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** The Retry-After header in seconds, when present. */
  retryAfterSeconds: number | undefined;
  /** What was being done, for the message: "files/list_folder dir/sub". Never holds a secret. */
  operation: string;
}

export type ErrorReader = (response: ErrorResponse) => FerryError;

/**
 * The start of an error answer's body for a message: its whitespace (an HTML page's lines and
 * indentation) folded to single spaces, so that a failure reads as one line (as `/failures` and the report show it).
 */
export function bodyExcerpt(text: string, max: number): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, max);
}

/**
 * A failed answer as a FerryError, worded alike by the errors.ts of providers whose error JSON holds a
 * message and a code: "<provider>: <operation>: <message> (HTTP <status>, <code>)", the start of the
 * body standing in for a missing message; Retry-After kept when passing (throttled or transient: a
 * retry is never sooner than the provider asked, docs/api.md "Transfers"). The message, the code,
 * the kind and the cause are what that errors.ts read.
 */
export function answerError(
  provider: string,
  response: ErrorResponse,
  kind: ErrorKind,
  found: { message?: string | undefined; code?: string | undefined },
  cause: unknown,
): FerryError {
  const said = found.message ?? (bodyExcerpt(response.text, 200) || `HTTP ${response.status}`);
  const code = found.code ? `, ${found.code}` : '';
  const options: { cause: unknown; retryAfterSeconds?: number } = { cause };
  if ((kind === 'throttled' || kind === 'transient') && response.retryAfterSeconds !== undefined) {
    options.retryAfterSeconds = response.retryAfterSeconds;
  }
  return new FerryError(
    kind,
    `${provider}: ${response.operation}: ${said} (HTTP ${response.status}${code})`,
    options,
  );
}

export interface CallRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** Absolute URL. */
  url: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** A JSON body (sets Content-Type). Exclusive with `body`. */
  json?: unknown;
  body?: Buffer | string | Readable;
  signal?: AbortSignal | undefined;
  /** Non-2xx statuses returned to the caller instead of being read as errors (e.g. 302, 202). */
  accept?: readonly number[];
  /** Send no Authorization header: pre-signed URLs on another host must never see the token. */
  anonymous?: boolean;
  /** For messages: "files/download a/b.txt". */
  operation: string;
}

export interface CallResponse {
  status: number;
  headers: ResponseHeaders;
  /** Must be consumed or destroyed by the caller. Network errors while reading surface as transient. */
  body: Readable;
}

export interface OAuthHttpOptions {
  /** Provider name used in messages. */
  provider: string;
  secret: Secret<ProviderSecret>;
  /** The live token (the location's AccessTokenSource); without it, the secret's access_token. */
  tokens?: AccessTokenSource | undefined;
  readError: ErrorReader;
  /** Every connection of the store's private keep-alive Agent (which close() ends) is made through it. */
  egress: Egress;
  /**
   * The provider's own URLs, from the operator's settings (its API and content hosts): reached whatever
   * their address, and the only origins the access token is sent to.
   */
  origins: readonly string[];
  /** FERRY_OUTBOUND_…; OUTBOUND_DEFAULTS when absent. */
  timeouts?: OutboundTimeouts | undefined;
}

/** What an OAuth store's HTTP client takes, as they are, from its location and the store context. */
export type OAuthAccess = Pick<OAuthHttpOptions, 'secret' | 'tokens' | 'egress' | 'timeouts'>;

export function oauthAccess(location: StoreLocation, ctx: StoreContext): OAuthAccess {
  return { secret: location.secret, tokens: location.tokens, egress: ctx.egress, timeouts: ctx.outbound };
}

const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The bodies send() returned, with the bound readText() puts on reading one whole: a caller that reads
 * an answer whole (an upload session's JSON) gets the same bound as json() without passing it along.
 */
const answerBounds = new WeakMap<Readable, { ms: number; what: string }>();

export class OAuthHttp {
  readonly provider: string;
  readonly #tokens: AccessTokenSource;
  readonly #readError: ErrorReader;
  readonly #dispatcher: Dispatcher;
  readonly #origins: Set<string>;
  readonly #timeouts: OutboundTimeouts;
  #closed = false;

  constructor(options: OAuthHttpOptions) {
    this.provider = options.provider;
    this.#tokens = options.tokens ?? fixedToken(options.provider, options.secret);
    this.#readError = options.readError;
    this.#timeouts = options.timeouts ?? OUTBOUND_DEFAULTS;
    this.#origins = new Set(options.origins.map((url) => new URL(url).origin));
    this.#dispatcher = new Agent({
      keepAliveTimeout: 10_000,
      connections: 16,
      connect: options.egress.connect(options.origins),
    });
  }

  /**
   * One call. 2xx (and `accept`ed statuses) resolve; anything else rejects with the provider's
   * FerryError. A 401 renews the token and repeats the call once; a streamed body cannot be sent twice,
   * so then the renewed token waits for the caller's next attempt and the call fails as passing.
   */
  send(req: CallRequest): Promise<CallResponse> {
    return this.#send(req, false);
  }

  /** `whole`: the answer will be read whole, so each attempt is bounded as a whole by answerMs. */
  async #send(req: CallRequest, whole: boolean): Promise<CallResponse> {
    if (req.anonymous) return this.#attempt(req, undefined, whole);
    const token = await this.#tokens.current(req.signal ?? undefined);
    try {
      return await this.#attempt(req, token, whole);
    } catch (err) {
      if (!(err instanceof Unauthorized)) throw err;
      if (!this.#tokens.renew) throw err.error;
      await this.#tokens.renew(token, req.signal ?? undefined);
      if (req.body !== undefined && typeof req.body !== 'string' && !Buffer.isBuffer(req.body)) {
        throw new FerryError(
          'transient',
          `${this.provider}: ${req.operation}: the access token was renewed during the upload; try again`,
          { cause: err.error },
        );
      }
      try {
        return await this.#attempt(req, await this.#tokens.current(req.signal ?? undefined), whole);
      } catch (again) {
        throw again instanceof Unauthorized ? again.error : again;
      }
    }
  }

  async #attempt(req: CallRequest, token: Secret | undefined, whole: boolean): Promise<CallResponse> {
    const url = withQuery(req.url, req.query);
    const origin = new URL(url).origin;
    if (token !== undefined && !this.#origins.has(origin)) {
      // A session URL or redirect target the provider handed back, on a host that is not its own.
      throw invalid(
        `${this.provider}: ${req.operation}: ${origin} is not one of the provider's own hosts; ` +
          'the access token is sent to those only',
      );
    }
    const headers: Record<string, string> = { ...req.headers };
    if (token !== undefined) headers.authorization = `Bearer ${token.reveal()}`;
    let body: Buffer | string | Readable | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const what = `${this.provider}: ${req.operation}`;
    const bound = whole ? deadline(this.#timeouts.answerMs, what, req.signal) : undefined;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: req.method,
        headers,
        body: body ?? null,
        signal: bound?.signal ?? req.signal ?? null,
        dispatcher: this.#dispatcher,
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.idleMs,
      });
    } catch (err) {
      bound?.clear();
      throw networkFailure(err, this.provider, req.operation);
    }
    const { statusCode: status } = response;
    if ((status >= 200 && status < 300) || req.accept?.includes(status)) {
      const guarded = this.#guard(response.body, req.operation);
      if (bound) guarded.once('close', () => bound.clear());
      else answerBounds.set(guarded, { ms: this.#timeouts.answerMs, what });
      return { status, headers: response.headers, body: guarded };
    }
    const failure = await this.#failure(response, req.operation, bound);
    throw status === 401 && token !== undefined ? new Unauthorized(failure) : failure;
  }

  /** A call whose answer is JSON (or empty: undefined). */
  async json<T>(req: CallRequest): Promise<T> {
    const res = await this.#send(req, true);
    const text = await readText(res.body, Number.POSITIVE_INFINITY);
    try {
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } catch (err) {
      // A proxy's HTML page or a cut answer: passing, as far as we can tell.
      throw new FerryError('transient', `${this.provider}: ${req.operation}: the answer is not JSON`, {
        cause: err,
      });
    }
  }

  /** A call whose answer body is not needed. */
  async discard(req: CallRequest): Promise<CallResponse> {
    const res = await this.send(req);
    res.body.resume();
    return res;
  }

  /** Ends the private Agent's sockets. Safe to call more than once. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      await this.#dispatcher.close();
    }
  }

  /** Reads a non-2xx answer (within the call's bound, or one of answerMs from now) into its FerryError. */
  async #failure(
    response: Dispatcher.ResponseData,
    operation: string,
    bound: Deadline | undefined,
  ): Promise<unknown> {
    let text = '';
    try {
      text = bound
        ? await readText(response.body, ERROR_BODY_LIMIT)
        : await readWithin(
            response.body,
            ERROR_BODY_LIMIT,
            this.#timeouts.answerMs,
            `${this.provider}: ${operation}`,
          );
    } catch (err) {
      return networkFailure(err, this.provider, operation);
    } finally {
      bound?.clear();
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return this.#readError({
      status: response.statusCode,
      headers: response.headers,
      text,
      json,
      retryAfterSeconds: parseRetryAfter(response.headers['retry-after']),
      operation,
    });
  }

  /** Re-emits a body's read errors as FerryErrors (transient), so consumers see one error vocabulary. */
  #guard(body: Readable, operation: string): Readable {
    const out = new PassThrough({ highWaterMark: 64 * 1024 });
    body.on('error', (err) => out.destroy(networkFailure(err, this.provider, operation) as Error));
    out.on('close', () => {
      if (!body.destroyed) body.destroy();
    });
    body.pipe(out);
    return out;
  }
}

/** A 401 on its way to one renewal; `error` is what the provider's errors.ts made of it. */
class Unauthorized extends Error {
  constructor(readonly error: unknown) {
    super('unauthorized');
  }
}

/** The secret's access_token as it is, for a store opened without a token source (store tests). */
function fixedToken(provider: string, secret: Secret<ProviderSecret>): AccessTokenSource {
  const token = async () => {
    const value = (secret.reveal() as { access_token?: unknown }).access_token;
    if (typeof value !== 'string' || value === '') {
      throw invalid(`${provider}: the location's secret has no access_token`);
    }
    return new Secret(value);
  };
  return { current: token };
}

function withQuery(url: string, query: CallRequest['query']): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) u.searchParams.set(key, String(value));
  }
  return u.toString();
}

/**
 * Reads a body as UTF-8 text, keeping at most `limit` bytes (the rest is drained). A body OAuthHttp's
 * send() returned is read within the call's answer bound; a stalled one fails as transient.
 */
export function readText(body: Readable, limit: number): Promise<string> {
  const bounded = answerBounds.get(body);
  return bounded ? readWithin(body, limit, bounded.ms, bounded.what) : readAll(body, limit);
}

/** readText with a bound on the whole read: the body is destroyed with FerryError('transient') at `ms`. */
async function readWithin(body: Readable, limit: number, ms: number, what: string): Promise<string> {
  const bound = deadline(ms, what);
  const cut = () => body.destroy(bound.signal.reason as Error);
  bound.signal.addEventListener('abort', cut, { once: true });
  try {
    return await readAll(body, limit);
  } finally {
    bound.clear();
    bound.signal.removeEventListener('abort', cut);
  }
}

async function readAll(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    if (kept < limit) {
      const slice = buf.subarray(0, limit - kept);
      chunks.push(slice);
      kept += slice.length;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
