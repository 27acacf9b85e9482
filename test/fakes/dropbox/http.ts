// Plain-text answers of the fake Dropbox: Dropbox answers 400 (bad input) and 5xx with text bodies
// ("Errors", https://www.dropbox.com/developers/documentation/http/documentation#error-handling).
import type { ServerResponse } from 'node:http';

/** A malformed request: answered 400 with a plain-text explanation. */
export class BadRequest extends Error {}

export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
