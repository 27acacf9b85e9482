// Google's JSON API error body, shared by the fake Drive and the fake GCS (the same shape:
// https://developers.google.com/drive/api/guides/handle-errors and
// https://cloud.google.com/storage/docs/json_api/v1/status-codes):
//   {"error": {"code": 404, "message": "…", "errors": [{"domain", "reason", "message"}]}}
import type { ServerResponse } from 'node:http';
import { type Fixture, fill, fixture, part } from './fixtures.js';
import { sendJson } from './server.js';

/** A recorded Google error body with some of code, reason and message replaced. */
export function googleError(
  recorded: Fixture,
  values: { code?: number; reason?: string; message?: string },
): Record<string, unknown> {
  const body = recorded.body as Record<string, unknown>;
  const error = part(body, 'error');
  const first = (error.errors as Record<string, unknown>[])[0] ?? {};
  const message = values.message ?? error.message;
  return fill(body, {
    error: fill(error, {
      code: values.code ?? error.code,
      message,
      errors: [fill(first, { reason: values.reason ?? first.reason, message })],
    }),
  });
}

/** Answers a Google error, in the shape of `provider`'s recorded not-found answer. */
export function sendGoogleError(
  provider: 'drive' | 'gcs',
  res: ServerResponse,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): undefined {
  return sendJson(
    res,
    status,
    googleError(fixture(provider, 'error_not_found'), { code: status, reason, message }),
    headers,
  );
}
