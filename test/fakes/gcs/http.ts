// HTTP helpers of the fake GCS: Google's JSON API error body, filled in from ./fixtures, and paths.
// Error shape and reasons: https://cloud.google.com/storage/docs/json_api/v1/status-codes
import type { ServerResponse } from 'node:http';
import { sendGoogleError } from '../google.js';
import { readBody, sendJson } from '../server.js';

export { readBody, sendJson };

/** `{"error": {"code", "message", "errors": [{"domain", "reason", "message"}]}}` */
export function sendError(
  res: ServerResponse,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendGoogleError('gcs', res, status, reason, message, headers);
}

/** Path segments of a raw request path, each percent-decoded (object names encode "/" as %2F). */
export function segments(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
}
