// The one place that reads Google Cloud Storage error shapes and turns them into FerryError kinds:
// the JSON API error body ({"error": {"code", "message", "errors": [{"reason"}]}}) as the storage
// library hands it over (ApiError, or a download error whose message is the raw body), answers of
// the resumable-upload requests, the OAuth token endpoint's {"error", "error_description"}, and
// failed connections (including the egress gateway's refusals).
// https://cloud.google.com/storage/docs/json_api/v1/status-codes
// https://developers.google.com/identity/protocols/oauth2/service-account#error-codes
import { type ErrorKind, FerryError, isFerryError } from '../../errors.js';
import { connectionFailure, parseRetryAfter } from '../../net/failures.js';

/** The reason the egress gateway (gateway.ts) puts in its error body when the guard refuses. */
export const EGRESS_REFUSED_REASON = 'ferryEgressRefused';

type Headers = Record<string, string | string[] | undefined>;

/** An HTTP answer that was not a success. */
export interface Answer {
  status: number;
  headers: Headers;
  /** The body: parsed JSON, text, or nothing. */
  body: unknown;
}

interface GoogleErrorBody {
  code?: number;
  message?: string;
  errors?: { reason?: string; message?: string }[];
}

const CREDENTIAL_REASONS = new Set(['authError', 'accountDisabled', 'userProjectAccountProblem']);

/** Any failure of a storage call. `what` names the operation and path for the message. */
export function toFerryError(err: unknown, what: string, signal?: AbortSignal): unknown {
  if (isFerryError(err)) return err;
  if (err instanceof Error && err.name === 'AbortError' && signal?.aborted) return err;
  if (!(err instanceof Error)) {
    // A resumable upload fails with the answer's `error` member itself, a plain object.
    const body = err as GoogleErrorBody | null;
    if (typeof body?.code === 'number') return fromGoogleError(body.code, body, {}, what, err);
    return new FerryError('transient', `gcs: ${what}: ${String(err)}`, { cause: err });
  }
  const e = err as Error & {
    code?: unknown;
    errors?: unknown;
    response?: { headers?: Headers; status?: number };
  };
  const status = typeof e.code === 'number' ? e.code : e.response?.status;
  if (typeof status === 'number' && status >= 300) {
    return fromGoogleError(status, bodyOf(e), e.response?.headers ?? {}, what, err);
  }
  // The library's own integrity checks: what arrived is not what was sent. Worth another try.
  if (
    e.code === 'FILE_NO_UPLOAD' ||
    e.code === 'FILE_NO_UPLOAD_DELETE' ||
    e.code === 'CONTENT_DOWNLOAD_MISMATCH'
  ) {
    return new FerryError('transient', `gcs: ${what}: checksum mismatch (${e.message})`, { cause: err });
  }
  return connectionError(err, what);
}

/** A non-2xx answer of a request the store or its AuthClient made itself. */
export function answerError(answer: Answer, what: string): FerryError {
  const body =
    typeof answer.body === 'string'
      ? (parseBody(answer.body) ?? { message: answer.body })
      : ((answer.body as { error?: GoogleErrorBody } | undefined)?.error ?? {});
  return fromGoogleError(answer.status, body, answer.headers, what, undefined);
}

/** The token endpoint's refusal or failure (RFC 6749 section 5.2 error answers). */
export function tokenError(answer: Answer): FerryError {
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as {
    error?: unknown;
    error_description?: unknown;
  };
  const code = typeof body.error === 'string' ? body.error : `HTTP ${answer.status}`;
  const detail = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
  const message = `gcs: token endpoint: ${code}${detail}`;
  const retryAfter = parseRetryAfter(answer.headers['retry-after']);
  if (answer.status === 429 || answer.status === 503) return throttled(message, retryAfter, undefined);
  if (answer.status >= 500) return new FerryError('transient', message);
  if (answer.status === 404) return new FerryError('invalid', `${message} (is token_uri right?)`);
  // invalid_grant (a key Google no longer accepts, a deleted account), invalid_client,
  // unauthorized_client: only a new key helps.
  return new FerryError('credentials_rejected', message);
}

/** The key file's private_key cannot sign: only a new key helps. The crypto error is not shown. */
export function keyError(cause: unknown): FerryError {
  return new FerryError(
    'credentials_rejected',
    'gcs: the service account private_key cannot sign (not a valid RSA key)',
    {
      cause,
    },
  );
}

/** A request that got no HTTP answer: refused, reset, DNS, timeout. */
export function connectionError(err: unknown, what: string): FerryError | Error {
  if (isFerryError(err)) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (isFerryError(cause)) return cause;
  return new FerryError('transient', `gcs: ${what}: ${connectionFailure(err)}`, { cause: err });
}

function fromGoogleError(
  status: number,
  body: GoogleErrorBody,
  headers: Headers,
  what: string,
  cause: unknown,
): FerryError {
  const reason = body.errors?.[0]?.reason ?? '';
  const text = body.message ?? body.errors?.[0]?.message ?? `HTTP ${status}`;
  if (reason === EGRESS_REFUSED_REASON) return new FerryError('invalid', `gcs: ${text}`, { cause });
  const message = `gcs: ${what}: ${said(text, status)}`;
  // A declared CRC32C or MD5 the received media does not match ("Provided MD5 hash … doesn't match
  // calculated MD5 hash …"): the bytes changed on the way, and another attempt sends them again.
  const kind = status === 400 && /doesn't match calculated/.test(text) ? 'transient' : kindOf(status, reason);
  // Kept on every passing failure: a retry is never sooner than asked (docs/api.md, "Transfers").
  const retryAfter = parseRetryAfter(headers['retry-after']);
  if (kind === 'throttled') return throttled(message, retryAfter, cause);
  if (kind === 'transient' && retryAfter !== undefined) {
    return new FerryError(kind, message, { cause, retryAfterSeconds: retryAfter });
  }
  return new FerryError(kind, message, { cause });
}

/**
 * An answer's words in one line, with its status. The library words several errors as "Multiple errors
 * occurred during the request. Please see the `errors` array…" and a numbered line for each: those
 * lines are what is kept, joined.
 */
function said(text: string, status: number): string {
  const numbered = text.startsWith('Multiple errors occurred')
    ? [...text.matchAll(/^\s*\d+\.\s+(.+)$/gm)].map((m) => (m[1] ?? '').trim())
    : [];
  const line = (numbered.length > 0 ? numbered.join('; ') : text).split('\n', 1)[0]?.trim() ?? '';
  return line === '' || line === `HTTP ${status}` ? `HTTP ${status}` : `${line} (HTTP ${status})`;
}

function kindOf(status: number, reason: string): ErrorKind {
  if (status === 404) return 'not_found';
  if (status === 401 || CREDENTIAL_REASONS.has(reason)) return 'credentials_rejected';
  // A 403 (reason "forbidden") is a permission the service account lacks on this bucket or project
  // ("… does not have storage.buckets.create access"): the key itself was accepted.
  if (status === 403) return 'forbidden';
  // A bucket name in use (buckets.insert), or a conflicting change of the same resource.
  if (status === 409) return 'conflict';
  if (status === 429 || status === 503) return 'throttled';
  if (status >= 500) return 'transient';
  return 'invalid';
}

function throttled(message: string, retryAfter: number | undefined, cause: unknown): FerryError {
  return new FerryError('throttled', message, {
    ...(cause === undefined ? {} : { cause }),
    ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
  });
}

/**
 * The Google error body behind a library error: download errors carry the raw body as their message;
 * ApiErrors carry the parsed `errors`; a failed resumable chunk ("Upload failed") carries the whole
 * answer body as errors[0].
 */
function bodyOf(e: Error & { errors?: unknown }): GoogleErrorBody {
  const parsed = parseBody(e.message);
  if (parsed) return parsed;
  const errors = Array.isArray(e.errors) ? (e.errors as unknown[]) : [];
  const embedded = (errors[0] as { error?: GoogleErrorBody } | undefined)?.error;
  if (typeof embedded === 'object' && embedded !== null) return embedded;
  const body: GoogleErrorBody = { message: e.message };
  if (errors.length > 0) body.errors = errors as NonNullable<GoogleErrorBody['errors']>;
  return body;
}

function parseBody(text: string): GoogleErrorBody | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as { error?: GoogleErrorBody };
    return typeof parsed.error === 'object' && parsed.error !== null ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}
