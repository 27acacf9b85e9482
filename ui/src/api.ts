// The console's only way to ferry: the authenticated API (docs/api.md) with the key kept for this tab
// (sessionStorage), errors turned into readable messages, and the live-progress stream read over
// fetch, because EventSource cannot send the Authorization header (docs/api.md, "Live progress"). Every
// call names a route of the API's route map (src/api/routes.ts), so tsc checks its path, body and answer
// against the schemas the server validates with.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import {
  type AnswerOf,
  type DryRunOf,
  type Method,
  type PathOf,
  type PlanOf,
  pathOf,
  type RequestArgs,
} from '../../src/api/routes.js';

const KEY = 'ferry.key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key);
}

/**
 * A failed request: `message` is a sentence a person understands (what happened, what to do), `detail`
 * the technical part (the status and ferry's own message) that the console shows one click away.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

let keyRefused: ((reason: string) => void) | undefined;

/**
 * Called with a sentence when ferry refuses the key (a 401, or the event stream ending because the key
 * was revoked or expired): the console then returns to sign-in with that reason (docs/console.md).
 */
export function onKeyRefused(handler: (reason: string) => void): void {
  keyRefused = handler;
}

const refusedSentence = (why: string) => `The API key was refused (${why}). Sign in again.`;

/** How ferry says a location is not usable: "location <label> (<id>) is [now] failed: …", "… needs attention: …". */
const LOCATION_STATE =
  /^location (.+?) \([0-9a-f-]{36}\) (?:is (?:now )?(failed|needs_attention)|(needs attention))/;

/** ferry's own words with a full stop, for the end of a sentence. */
const said = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

/**
 * The sentence for an answer of `status` whose body said `server` (docs/api.md, "Errors"). Where ferry's
 * message is about what the caller sent (400, 404, 409, 422) it is the reason and stays in the sentence;
 * a provider's own words (403, 5xx: addresses, error codes) stay in the detail.
 */
export function sentenceFor(status: number, server: string, retryAfter?: string | null): string {
  const wait = retryAfter && /^\d+$/.test(retryAfter) ? `${retryAfter} seconds` : 'a few seconds';
  switch (status) {
    case 0:
      return 'ferry could not be reached. Is the server running?';
    case 400:
    case 422:
      return `ferry did not accept that: ${said(server)}`;
    case 401:
      return refusedSentence(server);
    case 403: {
      // ferry's own refusal of a key without the scope an action needs (docs/api.md, "Scopes").
      const scope = /lacks the "(\w+)" scope/.exec(server)?.[1];
      if (scope)
        return `This API key may not do that: it needs the "${scope}" scope. Sign in with a key that has it.`;
      return "The storage provider does not allow this with the location's credentials (permissions).";
    }
    case 404:
      return `That does not exist (any more): ${said(server)} Reload to see what there is now.`;
    case 408:
      return 'The request took too long to arrive; try again.';
    case 409: {
      // A location that cannot be used (docs/api.md, "Location health"): the provider's words go to
      // the detail, the sentence says what state it is in and where to mend it.
      const located = LOCATION_STATE.exec(server);
      if (located) {
        const state =
          located[2] === 'failed'
            ? 'the storage provider refused its credentials'
            : 'a refresh of its access needs a person';
        return `The location ${located[1]} cannot be used now: ${state}. Its health, and a form to replace its secret, are on the Locations page.`;
      }
      if (/credential|the location is failed|was deleted/i.test(server))
        return `The location cannot be used now: ${said(server)} Its health is on the Locations page.`;
      return `That conflicts with how things are now: ${said(server)}`;
    }
    case 413:
      return 'That is too large for ferry to accept.';
    case 414:
    case 431:
      return 'The request is too long for ferry (its address or headers).';
    case 429:
      return `Too many requests for now: slow down and try again in ${wait}.`;
    case 500:
      return 'ferry failed while doing this (an internal error; the server log has the details).';
    case 502:
      if (/ECONNREFUSED|connection refused|ECONNRESET|socket hang up|connect/i.test(server))
        return "ferry could not reach the storage provider (the connection failed). Check the location's endpoint and that the provider is up.";
      if (/ENOTFOUND|EAI_AGAIN|getaddrinfo|dns/i.test(server))
        return "ferry could not find the storage provider's address. Check the location's endpoint.";
      if (/timed? ?out|ETIMEDOUT|deadline/i.test(server))
        return 'The storage provider did not answer in time. Try again in a moment.';
      return 'The storage provider did not answer properly. Try again in a moment.';
    case 503:
      return `The storage provider (or ferry's database) is unavailable or busy; try again in ${wait}.`;
    case 504:
      return 'The storage provider did not answer in time. Try again in a moment.';
    default:
      return status >= 500
        ? 'ferry or the storage provider failed; try again in a moment.'
        : `ferry refused the request: ${said(server)}`;
  }
}

/**
 * A readable sentence, and the technical detail, for an answer that is not 2xx, from its status line,
 * its body's text (ferry's `{error, message}`, or anything else) and its Retry-After. Every request of
 * the console (fetch here, XMLHttpRequest in files.ts) reads its errors through this one function.
 */
export function errorFrom(
  status: number,
  statusText: string,
  text: string,
  retryAfter: string | null,
): ApiError {
  let server = statusText;
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof body.message === 'string') server = body.message;
    else if (typeof body.error === 'string') server = body.error;
  } catch {
    // Not JSON: the status line says enough.
  }
  const sentence = sentenceFor(status, server, retryAfter);
  if (status === 401) keyRefused?.(sentence);
  const detail = [
    `HTTP ${status}${statusText ? ` ${statusText}` : ''}`,
    server,
    retryAfter ? `Retry-After: ${retryAfter}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return new ApiError(status, sentence, detail);
}

/** The same for a fetch Response. */
export async function errorOf(res: Response): Promise<ApiError> {
  return errorFrom(
    res.status,
    res.statusText,
    await res.text().catch(() => ''),
    res.headers.get('retry-after'),
  );
}

/** No answer at all: ferry (or the network to it) is down. */
export function unreachable(err: unknown): ApiError {
  return new ApiError(0, sentenceFor(0, ''), `no answer from ${location.origin}: ${String(err)}`);
}

/** A dry run (`dry_run: true`) of a route that makes plans: the plan (docs/api.md, "Plans"). */
export function api<M extends Method, P extends PathOf<M>>(
  method: M,
  path: P,
  request: DryRunOf<M, P>,
): Promise<PlanOf<M, P>>;
/** `method path` with `{id}`, the query and the body of `request`: its answer. */
export function api<M extends Method, P extends PathOf<M>>(
  method: M,
  path: P,
  ...request: RequestArgs<M, P>
): Promise<AnswerOf<M, P>>;
export async function api(
  method: Method,
  path: string,
  request?: { id?: string; query?: object; body?: unknown },
): Promise<unknown> {
  const body = request?.body;
  const headers: Record<string, string> = { authorization: `Bearer ${storedKey() ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(pathOf(path, request), {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw unreachable(err);
  }
  if (!res.ok) throw await errorOf(res);
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

export interface StreamEvent {
  event: 'job' | 'transfer' | 'send';
  data: Record<string, unknown>;
}

/**
 * Reads GET /v1/events until `signal` aborts, calling `onEvent` for each event; reconnects after a
 * pause when the stream ends or fails (the server restarted), and says so through `onState`.
 */
export async function followEvents(
  onEvent: (e: StreamEvent) => void,
  onState: (live: boolean) => void,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const res = await fetch('/v1/events', {
        headers: { authorization: `Bearer ${storedKey() ?? ''}` },
        signal,
      });
      if (!res.ok || !res.body) throw await errorOf(res);
      onState(true);
      // The stream's framing (events, data lines, comments used as heartbeats) is read by
      // eventsource-parser; only the events ferry sends are looked at.
      const reader = res.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream())
        .getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const { event, data } = value;
        if ((event === 'job' || event === 'transfer' || event === 'send') && data)
          onEvent({ event, data: JSON.parse(data) as Record<string, unknown> });
        // The key was revoked or expired while the stream was open (docs/api.md, "Live progress").
        if (event === 'end' && data) {
          const end = JSON.parse(data) as { error?: unknown; message?: unknown };
          if (end.error === 401) {
            keyRefused?.(refusedSentence(String(end.message)));
            return;
          }
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    onState(false);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}
