// Google's JSON API error body, shared by the fake Drive and the fake GCS (the same shape:
// https://developers.google.com/drive/api/guides/handle-errors and
// https://cloud.google.com/storage/docs/json_api/v1/status-codes):
//   {"error": {"code": 404, "message": "…", "errors": [{"domain", "reason", "message"}]}}
import { type Fixture, fill, part } from './fixtures.js';

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
