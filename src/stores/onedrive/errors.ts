// The one place that reads Microsoft Graph's error answers and turns them into FerryError kinds.
// Shape (https://learn.microsoft.com/graph/errors):
//   {"error": {"code": "itemNotFound", "message": "The resource could not be found.", "innerError": {…}}}
// Throttling (https://learn.microsoft.com/graph/throttling): 429, or 503 with Retry-After; 509 is
// SharePoint's "bandwidth limit exceeded". A copy's monitor reports failures in the same
// {code, message} shape inside an asyncJobStatus, read here too.
import type { ErrorKind, FerryError } from '../../errors.js';
import { answerError, type ErrorResponse } from '../shared/http.js';

interface GraphError {
  code?: unknown;
  message?: unknown;
}

function details(json: unknown): { code?: string; message?: string } {
  const error = (json as { error?: unknown } | undefined)?.error;
  if (!error || typeof error !== 'object') return {};
  const e = error as GraphError;
  const out: { code?: string; message?: string } = {};
  if (typeof e.code === 'string') out.code = e.code;
  if (typeof e.message === 'string') out.message = e.message;
  return out;
}

function kindOf(status: number, retryAfter: number | undefined): ErrorKind {
  if (status === 401) return 'credentials_rejected';
  if (status === 404) return 'not_found';
  if (status === 403) return 'forbidden'; // accessDenied: this item, not the credentials
  if (status === 409) return 'conflict'; // nameAlreadyExists
  if (status === 429 || status === 509 || (status === 503 && retryAfter !== undefined)) return 'throttled';
  if (status === 408 || status === 423 || (status >= 500 && status !== 507)) return 'transient';
  if (status >= 400) return 'invalid';
  return 'transient';
}

/** Reads one failed Graph answer (the message keeps Microsoft's words; it never holds a secret). */
export function readGraphError(response: ErrorResponse): FerryError {
  const { code, message } = details(response.json);
  const kind = kindOf(response.status, response.retryAfterSeconds);
  return answerError('onedrive', response, kind, { message, code }, { status: response.status, code });
}

/** A failed asyncJobStatus of a copy: its error code read as the matching HTTP answer would be. */
export function readJobFailure(status: unknown, operation: string): FerryError {
  const { code, message } = details(status);
  const httpStatus = code === 'itemNotFound' ? 404 : code === 'nameAlreadyExists' ? 409 : 500;
  return readGraphError({
    status: httpStatus,
    headers: {},
    text: message ?? 'the copy failed',
    json: status,
    retryAfterSeconds: undefined,
    operation,
  });
}
