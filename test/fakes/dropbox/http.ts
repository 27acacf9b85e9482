// Plain-text answers of the fake Dropbox: Dropbox answers 400 (bad input) and 5xx with text bodies
// ("Errors", https://www.dropbox.com/developers/documentation/http/documentation#error-handling);
// they are written with sendText from ../server.ts.

/** A malformed request: answered 400 with a plain-text explanation. */
export class BadRequest extends Error {}
