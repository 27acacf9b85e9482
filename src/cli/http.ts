// The client's one way to the HTTP API (docs/api.md): JSON in and out, the key in the Authorization
// header, and every error answer turned into a CliError whose message is the server's, with what to do
// added where the status says it, and whose exit code is the status's (src/cli/exit.ts).
//
// A 429 (ferry's rate limits, docs/api.md "Rate limits and caps") is waited out here, for every request
// the CLI makes: its Retry-After, when it is at most a minute (a rate limit's window), is said on stderr
// and waited, then the request is made again, up to MAX_WAITS times. One wait holds every request of the
// process, so the files of a folder going four at a time do not each knock at a full bucket. A longer
// Retry-After (an hourly limit) is the answer, as before.
//
// get and send take a route of the API's route map (src/api/routes.ts) with its id, query and body, so
// tsc checks each call's path, body and answer against the schemas the server validates with.
import {
  type AmbiguousName,
  type AnswerOf,
  type DryRunOf,
  type PathOf,
  type PlanOf,
  pathOf,
  type RequestArgs,
  type SendMethod,
} from '../api/routes.js';
import { CliError, EXIT, type ExitCode } from './exit.js';
import { time } from './format.js';
import type { Settings } from './settings.js';

export interface Api {
  readonly url: string;
  /** GET a route of the map, `{id}` and query from `request`: its answer. */
  get<P extends PathOf<'GET'>>(path: P, ...request: RequestArgs<'GET', P>): Promise<AnswerOf<'GET', P>>;
  /** A dry run (`dry_run: true`) of a route that makes plans: the plan (docs/api.md, "Plans"). */
  send<M extends SendMethod, P extends PathOf<M>>(
    method: M,
    path: P,
    request: DryRunOf<M, P>,
  ): Promise<PlanOf<M, P>>;
  /** `method` on a route of the map, with the body of `request` as JSON: its answer. */
  send<M extends SendMethod, P extends PathOf<M>>(
    method: M,
    path: P,
    ...request: RequestArgs<M, P>
  ): Promise<AnswerOf<M, P>>;
  /**
   * A request whose body or answer is a stream of bytes (PUT/GET/HEAD /v1/files, docs/api.md "Files
   * through ferry"): the answer as it came when its status is 2xx or one of `pass`, otherwise the same
   * CliError as every other call. The caller reads (or cancels) the body.
   */
  raw(method: 'GET' | 'HEAD' | 'PUT', path: string, init?: RawInit): Promise<Response>;
}

export interface RawInit {
  headers?: Record<string, string>;
  /**
   * The request body; a function makes it afresh for each try, so that a 429 can be waited out and the
   * request made again (a stream given as such is read once, and its 429 is the answer).
   */
  body?: ReadableStream<Uint8Array> | (() => ReadableStream<Uint8Array>);
  /**
   * Statuses outside 2xx that the caller handles itself (416 for a resumed download); a 429 among them
   * is answered at once, not waited out.
   */
  pass?: readonly number[];
  signal?: AbortSignal;
}

/**
 * A 403 of ferry's own: the key lacks the scope the request needs, asked for a key beyond its own
 * scopes, or is limited to some locations and asked for the whole workspace (docs/api.md, "Scopes").
 * Any other 403 is a provider refusing an operation on a bucket or file.
 */
function scopeRefusal(status: number, message: string): boolean {
  return (
    status === 403 &&
    (/^this API key lacks the "[a-z]+" scope/.test(message) ||
      /^a key can create keys only within its own scopes/.test(message) ||
      /^this API key is limited to some locations/.test(message))
  );
}

function exitCodeFor(status: number): ExitCode {
  if (status === 401) return EXIT.auth;
  if (status === 404 || status === 410) return EXIT.notFound;
  if (status === 409 || status === 429) return EXIT.conflict;
  if (status === 400 || status === 405 || status === 413 || status === 415 || status === 422)
    return EXIT.usage;
  return EXIT.failure;
}

/** The message of an error answer (docs/api.md, "Errors"), with the next step where there is one. */
function explain(
  status: number,
  body: Record<string, unknown>,
  retryAfter: string | null,
  settings: Settings,
): string {
  const server =
    typeof body.message === 'string'
      ? body.message
      : typeof body.error === 'string'
        ? body.error
        : `HTTP ${status}`;
  if (status === 401)
    return `${server}: the server at ${settings.url} did not accept the API key from ${settings.keySource}; set FERRY_API_KEY to a valid key or run ferry login`;
  if (scopeRefusal(status, server)) return `${server}; ferry whoami shows what this key may do`;
  if (status === 409 && Array.isArray(body.candidates)) {
    const lines = (body.candidates as AmbiguousName['candidates']).map(
      (c) => `  ${c.id}  ${c.provider}  created ${time(c.created_at)}`,
    );
    return `the name "${String(body.name)}" matches ${lines.length} locations; use the id of one in place of the name:\n${lines.join('\n')}`;
  }
  // The server's message may say when already ("retry in 59 s"): then once is enough.
  if ((status === 429 || status === 503) && retryAfter && !/\b(retry|try again) in\b/i.test(server))
    return `${server} (try again in ${retryAfter} s)`;
  if (status >= 500 && status !== 502 && status !== 503)
    return `${server} (the server's log has the details)`;
  if (egressRefusal(server))
    return `${server}; FERRY_EGRESS_ALLOW is a setting of the ferry server, not of this command: its operator adds the host or its address (FERRY_EGRESS_ALLOW=10.0.0.5 or 127.0.0.1) for ferry to reach a local or private endpoint`;
  return server;
}

/**
 * The server refused to reach an address that is not public (docs/api.md, "Outbound calls"): a 400 by
 * its status, but nothing on the command line is wrong; the server's setting decides (exit 1).
 */
function egressRefusal(message: string): boolean {
  return /\begress to .+ is not allowed\b/.test(message) && message.includes('FERRY_EGRESS_ALLOW');
}

/** The CLI's User-Agent: the client and the Node.js release it runs on. */
export const USER_AGENT = `ferry-cli (node ${process.version})`;

/** The longest Retry-After waited out: ferry's rate limits free a place within their one-minute window. */
export const MAX_RETRY_AFTER_S = 60;
/** How many 429s one request waits out before the refusal is its answer. */
export const MAX_WAITS = 10;

/** Retry-After in whole seconds (a number, or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A call's parts besides its method and path (src/api/routes.ts, RequestOf). */
interface Call {
  id?: string;
  query?: object;
  body?: unknown;
}

/** What the client calls to reach the server and to say it waits; the defaults are fetch and stderr. */
export interface ApiOptions {
  fetcher?: typeof fetch;
  /** A line for people on stderr: that a 429 is being waited out. */
  notice?: (line: string) => void;
}

/** The server's message of a 429, without the "; retry in N s" the wait line says itself. */
async function refusalText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  let message = `HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') message = body.message;
  } catch {}
  return message.replace(/;?\s*(retry|try again) in \d+ s\.?$/i, '');
}

/** Whether the caller handles `status` itself (RawInit.pass). */
function passes(init: RawInit | RequestInit, status: number): boolean {
  return 'pass' in init && init.pass?.includes(status) === true;
}

export function createApi(settings: Settings, options: ApiOptions = {}): Api {
  const { fetcher = fetch, notice = (line: string) => process.stderr.write(`${line}\n`) } = options;
  const key = settings.key;
  /** Until when every request waits: the latest Retry-After heard (epoch ms). */
  let heldUntil = 0;
  async function held(): Promise<void> {
    for (let left = heldUntil - Date.now(); left > 0; left = heldUntil - Date.now())
      await new Promise((resolve) => setTimeout(resolve, left));
  }
  async function hold(res: Response, seconds: number): Promise<void> {
    const until = Date.now() + seconds * 1000;
    // Said once per wait, not once per request that met it: several meet the same full bucket.
    if (until - heldUntil >= 1000) {
      const clear = process.stderr.isTTY ? '\r\x1b[K' : '';
      notice(`${clear}ferry: ${await refusalText(res)}; waiting ${seconds} s, then going on`);
    } else await res.body?.cancel();
    heldUntil = Math.max(heldUntil, until);
  }
  async function request(
    method: string,
    path: string,
    init: RawInit | RequestInit,
    accept: string,
  ): Promise<Response> {
    if (!key) throw new CliError('no API key: set FERRY_API_KEY or run ferry login', EXIT.auth);
    const headers: Record<string, string> = {
      authorization: `Bearer ${key.reveal()}`,
      accept,
      // Named in the audit log (docs/api.md, "Audit log") beside the address: what made the change.
      'user-agent': USER_AGENT,
      ...(init.headers as Record<string, string> | undefined),
    };
    const makeBody = typeof init.body === 'function' ? init.body : undefined;
    for (let waits = 0; ; waits++) {
      await held();
      const body = makeBody ? { body: makeBody(), duplex: 'half' } : {};
      const res = await send({ ...(init as RequestInit), ...body, method, headers } as RequestInit);
      // A body given as a stream has been read: its request cannot be made again. A caller that
      // handles a 429 itself (an event stream refused: src/cli/follow.ts) has its answer at once.
      const again = (typeof init.body !== 'object' || init.body === null) && !passes(init, 429);
      const seconds = res.status === 429 ? retryAfterSeconds(res.headers.get('retry-after')) : undefined;
      if (seconds === undefined || seconds > MAX_RETRY_AFTER_S || waits >= MAX_WAITS || !again) return res;
      await hold(res, Math.max(1, seconds));
    }
    async function send(requestInit: RequestInit): Promise<Response> {
      try {
        return await fetcher(`${settings.url}${path}`, requestInit);
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err;
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        const why = cause?.code ?? cause?.message ?? (err as Error).message;
        throw new CliError(
          `cannot reach ferry at ${settings.url} (${settings.urlSource}): ${why}; is the server running? set FERRY_URL or run ferry login --url URL`,
          EXIT.failure,
        );
      }
    }
  }
  async function failure(res: Response): Promise<CliError> {
    const text = await res.text().catch(() => '');
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {}
    const obj = json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
    const message = typeof obj.message === 'string' ? obj.message : '';
    const refused = scopeRefusal(res.status, message);
    return new CliError(
      explain(res.status, obj, res.headers.get('retry-after'), settings),
      refused ? EXIT.auth : egressRefusal(message) ? EXIT.failure : exitCodeFor(res.status),
      refused,
    );
  }
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await request(
      method,
      path,
      body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
      'application/json',
    );
    if (!res.ok) throw await failure(res);
    const text = await res.text();
    try {
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } catch {
      throw new CliError(`${settings.url}${path} answered something that is not JSON`, EXIT.failure);
    }
  }
  return {
    url: settings.url,
    // The map's types are checked at each call (Api above); here a call is its method, path and parts.
    get: ((path: string, request?: Call) => call('GET', pathOf(path, request))) as Api['get'],
    send: ((method: string, path: string, request?: Call) =>
      call(method, pathOf(path, request), request?.body)) as Api['send'],
    async raw(method, path, init = {}) {
      const res = await request(
        method,
        path,
        {
          ...(init.headers ? { headers: init.headers } : {}),
          ...(typeof init.body === 'function'
            ? { body: init.body }
            : init.body
              ? { body: init.body, duplex: 'half' }
              : {}),
          ...(init.signal ? { signal: init.signal } : {}),
          ...(init.pass ? { pass: init.pass } : {}),
        } as RawInit,
        '*/*',
      );
      if (res.ok || init.pass?.includes(res.status)) return res;
      throw await failure(res);
    },
  };
}
