// The one place that reads Google Drive's error answers and turns them into FerryError kinds.
// Shape (https://developers.google.com/drive/api/guides/handle-errors):
//   {"error": {"code": 403, "message": "User Rate Limit Exceeded",
//              "errors": [{"domain": "usageLimits", "reason": "userRateLimitExceeded", "message": "…"}]}}
// Drive says "slow down" with 403 rateLimitExceeded / userRateLimitExceeded or 429; the other 403s are
// permission or quota answers about one file (forbidden), which say nothing about the credentials.
import type { ErrorKind, FerryError } from '../../errors.js';
import { answerError, type ErrorResponse } from '../shared/http.js';

const THROTTLE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

interface GoogleError {
  message?: unknown;
  errors?: Array<{ reason?: unknown; message?: unknown }>;
}

function details(json: unknown): { message?: string; reason?: string } {
  const error = (json as { error?: unknown } | undefined)?.error;
  if (typeof error === 'string') return { message: error };
  if (!error || typeof error !== 'object') return {};
  const e = error as GoogleError;
  const first = Array.isArray(e.errors) ? e.errors[0] : undefined;
  const out: { message?: string; reason?: string } = {};
  if (typeof e.message === 'string') out.message = e.message;
  else if (typeof first?.message === 'string') out.message = first.message;
  if (typeof first?.reason === 'string') out.reason = first.reason;
  return out;
}

function kindOf(status: number, reason: string | undefined): ErrorKind {
  if (status === 401) return 'credentials_rejected';
  if (status === 404) return 'not_found';
  if (status === 429 || (status === 403 && reason !== undefined && THROTTLE_REASONS.has(reason)))
    return 'throttled';
  if (status === 403 && reason === 'fileNotDownloadable') return 'unsupported';
  if (status === 403) return 'forbidden';
  if (status === 408 || status >= 500) return 'transient';
  if (status >= 400) return 'invalid';
  return 'transient';
}

/** Reads one failed Drive answer (the message keeps Google's own words; it never holds a secret). */
export function readDriveError(response: ErrorResponse): FerryError {
  const { message, reason } = details(response.json);
  const kind = kindOf(response.status, reason);
  return answerError('drive', response, kind, { message, code: reason }, { status: response.status, reason });
}
