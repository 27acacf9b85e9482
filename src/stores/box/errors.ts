// The one place that reads Box's error answers ("Client error" resource,
// https://developer.box.com/reference/resources/client-error/, and "Errors",
// https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/):
// {"type": "error", "status": 404, "code": "not_found", "message": "...", "context_info": {...},
//  "help_url": "...", "request_id": "..."}. A 401 has an empty body and says why in WWW-Authenticate.
import { FerryError, isFerryError } from '../../errors.js';
import { bodyExcerpt, type ErrorResponse } from '../shared/http.js';

interface BoxErrorBody {
  code?: unknown;
  message?: unknown;
  context_info?: { conflicts?: unknown };
}

/** An item a 409 item_name_in_use names as being in the way. */
export interface BoxConflict {
  type: 'file' | 'folder' | 'web_link';
  id: string;
}

/** Kept as the FerryError's cause, so conflictOf() can answer without re-reading the body. */
interface BoxCause {
  status: number;
  code: string;
  conflicts: BoxConflict[];
}

export function readBoxError(res: ErrorResponse): FerryError {
  const body = (typeof res.json === 'object' && res.json !== null ? res.json : {}) as BoxErrorBody;
  const code = typeof body.code === 'string' ? body.code : '';
  let text = typeof body.message === 'string' ? body.message : bodyExcerpt(res.text, 300);
  if (res.status === 401 && !text) {
    const header = res.headers['www-authenticate'];
    const auth = Array.isArray(header) ? header.join(', ') : (header ?? '');
    text = /error_description="([^"]*)"/.exec(auth)?.[1] ?? 'unauthorized';
  }
  // The status too: a plain-text body (a 5xx, a proxy's page) does not say what kind of answer it was.
  const said = [code, text].filter(Boolean).join(': ');
  const message = `box: ${res.operation}: ${said ? `${said} (HTTP ${res.status})` : `HTTP ${res.status}`}`;
  const cause: BoxCause = { status: res.status, code, conflicts: conflictsIn(body.context_info?.conflicts) };
  const retryAfter = res.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: res.retryAfterSeconds };

  if (res.status === 401) return new FerryError('credentials_rejected', message, { cause });
  if (res.status === 404) return new FerryError('not_found', message, { cause });
  if (res.status === 429) return new FerryError('throttled', message, { cause, ...retryAfter });
  if (res.status >= 500) return new FerryError('transient', message, { cause, ...retryAfter });
  if (res.status === 409) return new FerryError('conflict', message, { cause });
  // 403 access_denied_insufficient_permissions, access_denied_item_locked...: this item, not the token.
  if (res.status === 403) return new FerryError('forbidden', message, { cause });
  // The bytes Box received are not those whose SHA-1 the request declared (Content-MD5 on an upload,
  // Digest on a part or a commit): changed on the way, and sent again by the next attempt.
  if (code === 'bad_digest' || (res.status === 412 && /digest/i.test(text))) {
    return new FerryError('transient', message, { cause });
  }
  // 400 bad_request / item_name_invalid, 412, 416...
  return new FerryError('invalid', message, { cause });
}

/** The item in the way, when `err` is Box's 409 item_name_in_use. */
export function conflictOf(err: unknown): BoxConflict | undefined {
  if (!isFerryError(err, 'conflict')) return undefined;
  const cause = err.cause as BoxCause | undefined;
  return cause?.code === 'item_name_in_use' ? cause.conflicts[0] : undefined;
}

// context_info.conflicts is an array for folders and a single object for uploads.
function conflictsIn(value: unknown): BoxConflict[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.flatMap((item) => {
    const { type, id } = (item ?? {}) as { type?: unknown; id?: unknown };
    return (type === 'file' || type === 'folder' || type === 'web_link') && typeof id === 'string'
      ? [{ type, id }]
      : [];
  });
}

/** True when Box itself answered 404 (not when ferry found no such name in a listing). */
export function isBoxNotFound(err: unknown): boolean {
  return isFerryError(err, 'not_found') && (err.cause as BoxCause | undefined)?.status === 404;
}
