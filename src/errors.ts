// The catalogue of error kinds every layer of ferry speaks. Stores, the domain and the database throw
// FerryError with a kind; exactly one place (src/http/errors.ts) maps kinds to HTTP status codes.
// Messages must never contain a secret: they reach callers and logs verbatim.

export type ErrorKind =
  /** The request itself is wrong (400). */
  | 'invalid'
  /** No valid API key (401). */
  | 'unauthenticated'
  /** The named thing does not exist for the caller (404). */
  | 'not_found'
  /** The request conflicts with the state of a resource (409). */
  | 'conflict'
  /** The named thing existed for the caller and no longer can be used: an expired plan (410). */
  | 'gone'
  /** A secret of the wrong shape for its provider (422). */
  | 'unprocessable'
  /** A body over the limit (413). */
  | 'too_large'
  /** The caller stopped sending a body it had begun, for longer than ferry waits for a byte (408). */
  | 'stalled'
  /** ferry's own rate limit (429, Retry-After). */
  | 'rate_limited'
  /**
   * The provider refused this one operation (permissions on a bucket or file) although it accepted the
   * credentials (403). Unlike credentials_rejected it says nothing about the location's health.
   */
  | 'forbidden'
  /** The provider rejected the location's credentials for good (invalid grant, bad access key). */
  | 'credentials_rejected'
  /** The provider asked us to slow down (503 with Retry-After on calls that answer at once). */
  | 'throttled'
  /** The provider failed for a passing reason: refused connection, timeout, 5xx (502). */
  | 'transient'
  /** A capability the provider or ferry's configuration does not offer now (503). */
  | 'unavailable'
  /** The store cannot do what was asked (for example a write to a bucket listing). */
  | 'unsupported'
  /** A bug or an unexpected failure (500, details hidden). */
  | 'internal';

export interface FerryErrorOptions {
  cause?: unknown;
  /** Seconds the caller should wait, for rate_limited and throttled. */
  retryAfterSeconds?: number;
  /** Extra fields for the response body (only used by the ambiguous-name 409). */
  body?: Record<string, unknown>;
}

export class FerryError extends Error {
  readonly kind: ErrorKind;
  readonly retryAfterSeconds: number | undefined;
  readonly body: Record<string, unknown> | undefined;

  constructor(kind: ErrorKind, message: string, options: FerryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FerryError';
    this.kind = kind;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.body = options.body;
  }
}

export function isFerryError(err: unknown, kind?: ErrorKind): err is FerryError {
  return err instanceof FerryError && (kind === undefined || err.kind === kind);
}

export const invalid = (message: string, cause?: unknown) => new FerryError('invalid', message, { cause });
export const notFound = (message: string, cause?: unknown) => new FerryError('not_found', message, { cause });
export const conflict = (message: string, cause?: unknown) => new FerryError('conflict', message, { cause });
export const gone = (message: string, cause?: unknown) => new FerryError('gone', message, { cause });

/** How much of one value sent by a caller an error message quotes (docs/api.md, "Errors"). */
export const QUOTE_LIMIT = 100;
/** The longest error message, whatever it holds. */
export const MESSAGE_LIMIT = 400;

/** The first `limit` code points of text (a surrogate pair is never split) and "…". */
function prefix(text: string, limit: number): string {
  return `${[...text.slice(0, limit + 1)].slice(0, limit).join('')}…`;
}

const LONG_QUOTE = new RegExp(`"([^"]{${QUOTE_LIMIT + 1},})"`, 'g');
const LONG_RUN = new RegExp(`[^\\s"]{${QUOTE_LIMIT + 1},}`, 'g');

/**
 * A message bounded for a response: messages quote what the caller sent (a name, a path, a field), and a
 * caller can send a megabyte. Every quoted value ("…") and every run without a space longer than
 * QUOTE_LIMIT keeps its first QUOTE_LIMIT characters and "…"; the whole message is cut at MESSAGE_LIMIT.
 * Applied where errors become answers (src/http/errors.ts), so no message builder has to remember it.
 */
export function boundMessage(message: string): string {
  if (message.length <= QUOTE_LIMIT) return message;
  const bounded = message
    .replace(LONG_QUOTE, (_all, inner: string) => `"${prefix(inner, QUOTE_LIMIT)}"`)
    .replace(LONG_RUN, (run) => prefix(run, QUOTE_LIMIT));
  return bounded.length <= MESSAGE_LIMIT ? bounded : prefix(bounded, MESSAGE_LIMIT);
}
