// The one function that reads Dropbox's error answers (Dropbox for HTTP Developers, "Errors":
// https://www.dropbox.com/developers/documentation/http/documentation#error-handling, and the Error
// Handling Guide: https://developers.dropbox.com/error-handling-guide).
//
// 400 bad input (plain-text body), 401 bad or expired token, 403 no access, 409 an endpoint-specific
// error whose `error_summary` reads like "path/not_found/..." or "to/conflict/file/...", 429 rate limit
// (Retry-After header; body error.retry_after), 5xx Dropbox's side.
import { FerryError } from '../../errors.js';
import type { ErrorResponse } from '../shared/http.js';

interface DropboxErrorBody {
  error_summary?: unknown;
  error?: { retry_after?: unknown } | unknown;
}

/** Lookups whose "not_found" (and "not_file"/"not_folder") means the path names no such object. */
const LOOKUPS = new Set(['path', 'path_lookup', 'from_lookup']);
const MISSING = new Set(['not_found', 'not_file', 'not_folder']);

export function readDropboxError(res: ErrorResponse): FerryError {
  const body = (typeof res.json === 'object' && res.json !== null ? res.json : {}) as DropboxErrorBody;
  const summary = typeof body.error_summary === 'string' ? body.error_summary : res.text.trim().slice(0, 500);
  // The status too: a plain-text body (a 5xx, a proxy's page) does not say what kind of answer it was.
  const message = `dropbox: ${res.operation}: ${summary ? `${summary} (HTTP ${res.status})` : `HTTP ${res.status}`}`;
  const options = { cause: { status: res.status, summary } };

  if (res.status === 401) {
    // invalid_access_token, expired_access_token, missing_scope, user_suspended... The store's HTTP
    // client renews the token and repeats the call once before this error reaches its caller.
    return new FerryError('credentials_rejected', message, options);
  }
  if (res.status === 429) {
    const fromBody = (body.error as { retry_after?: unknown } | undefined)?.retry_after;
    const retryAfterSeconds =
      res.retryAfterSeconds ?? (typeof fromBody === 'number' && fromBody >= 0 ? fromBody : undefined);
    return new FerryError(
      'throttled',
      message,
      retryAfterSeconds === undefined ? options : { ...options, retryAfterSeconds },
    );
  }
  if (res.status >= 500) {
    return new FerryError(
      'transient',
      message,
      res.retryAfterSeconds === undefined
        ? options
        : { ...options, retryAfterSeconds: res.retryAfterSeconds },
    );
  }
  if (res.status === 409) {
    const [where = '', what = '', detail = ''] = summary.split('/');
    if (LOOKUPS.has(where) && MISSING.has(what)) return new FerryError('not_found', message, options);
    // too_many_write_operations: Dropbox's namespace lock contention, to be retried after a pause.
    if (summary.includes('too_many_write_operations')) return new FerryError('throttled', message, options);
    if (what === 'conflict' || detail === 'conflict') return new FerryError('conflict', message, options);
    // The bytes Dropbox received are not those whose content_hash the call declared: changed on the
    // way, and sent again by the next attempt.
    if (where === 'content_hash_mismatch') return new FerryError('transient', message, options);
    return new FerryError('invalid', message, options);
  }
  // 403: no access to this path or endpoint (team policy, app folder), the token itself is fine.
  if (res.status === 403) return new FerryError('forbidden', message, options);
  // 400 malformed request, other 4xx.
  return new FerryError('invalid', message, options);
}
