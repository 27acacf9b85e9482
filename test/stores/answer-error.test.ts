// How the drive and onedrive stores word a failed answer (src/stores/shared/http.ts, answerError, fed
// by each provider's errors.ts): the provider, the operation, the provider's message (else the start of
// the body, else the status), the HTTP status and the provider's code; Retry-After kept only when the
// answer is passing (a throttle or a server error). These words reach API callers in a failed
// transfer's error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readBoxError } from '../../src/stores/box/errors.js';
import { readDriveError } from '../../src/stores/drive/errors.js';
import { readGraphError } from '../../src/stores/onedrive/errors.js';
import type { ErrorResponse } from '../../src/stores/shared/http.js';

function answer(status: number, json: unknown, extra: Partial<ErrorResponse> = {}): ErrorResponse {
  return {
    status,
    headers: {},
    text: json === undefined ? '' : JSON.stringify(json),
    json,
    retryAfterSeconds: undefined,
    operation: 'files.get a/b',
    ...extra,
  };
}

describe('a failed drive or onedrive answer as a FerryError', () => {
  test('drive: its message, the status and the reason; Retry-After kept on a throttle', () => {
    const err = readDriveError(
      answer(
        403,
        { error: { message: 'User Rate Limit Exceeded', errors: [{ reason: 'userRateLimitExceeded' }] } },
        { retryAfterSeconds: 7 },
      ),
    );
    assert.equal(err.kind, 'throttled');
    assert.equal(
      err.message,
      'drive: files.get a/b: User Rate Limit Exceeded (HTTP 403, userRateLimitExceeded)',
    );
    assert.equal(err.retryAfterSeconds, 7);
    assert.deepEqual(err.cause, { status: 403, reason: 'userRateLimitExceeded' });
  });

  test('onedrive: its message and code; no Retry-After on an answer that is not passing', () => {
    const err = readGraphError(
      answer(
        404,
        { error: { code: 'itemNotFound', message: 'The resource could not be found.' } },
        {
          retryAfterSeconds: 3,
        },
      ),
    );
    assert.equal(err.kind, 'not_found');
    assert.equal(
      err.message,
      'onedrive: files.get a/b: The resource could not be found. (HTTP 404, itemNotFound)',
    );
    assert.equal(err.retryAfterSeconds, undefined);
    assert.deepEqual(err.cause, { status: 404, code: 'itemNotFound' });
  });

  test('without a message: the start of the body, else the status', () => {
    const long = 'x'.repeat(300);
    const fromBody = readGraphError(answer(500, undefined, { text: `  ${long}  ` }));
    assert.equal(fromBody.message, `onedrive: files.get a/b: ${'x'.repeat(200)} (HTTP 500)`);
    const bare = readDriveError(answer(502, undefined));
    assert.equal(bare.message, 'drive: files.get a/b: HTTP 502 (HTTP 502)');
  });
});

describe('an error page as the body', () => {
  const page =
    '<html>\n  <head><title>502 Bad Gateway</title></head>\n  <body>\n\t<h1>Bad Gateway</h1>\n  </body>\n</html>\n';
  const oneLine =
    '<html> <head><title>502 Bad Gateway</title></head> <body> <h1>Bad Gateway</h1> </body> </html>';

  test('drive and onedrive: the start of the page, on one line', () => {
    const html = { text: page, json: undefined };
    assert.equal(
      readDriveError(answer(502, undefined, html)).message,
      `drive: files.get a/b: ${oneLine} (HTTP 502)`,
    );
    assert.equal(
      readGraphError(answer(502, undefined, html)).message,
      `onedrive: files.get a/b: ${oneLine} (HTTP 502)`,
    );
  });

  test('box: the start of the page, on one line, with the status', () => {
    const err = readBoxError(answer(502, undefined, { text: page, json: undefined }));
    assert.equal(err.message, `box: files.get a/b: ${oneLine} (HTTP 502)`);
  });
});
