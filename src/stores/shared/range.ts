// Byte ranges for read() on HTTP stores: the Range header to send, and a guard for servers that
// ignore it and answer 200 with the whole object (RFC 9110 14.2 lets them), so the caller still gets
// exactly the bytes it asked for.
import { type Readable, Transform } from 'node:stream';
import type { ReadOptions } from '../contract.js';

type Range = NonNullable<ReadOptions['range']>;

/** "bytes=o-e" / "bytes=o-", or undefined when the range is the whole object. */
export function rangeHeader(range: Range | undefined): string | undefined {
  if (!range) return undefined;
  const { offset, length } = range;
  if (length === undefined) return offset > 0 ? `bytes=${offset}-` : undefined;
  return `bytes=${offset}-${offset + length - 1}`;
}

/** The body cut to the range when the server answered 200 instead of 206. */
export function sliceToRange(body: Readable, status: number, range: Range | undefined): Readable {
  if (status !== 200 || rangeHeader(range) === undefined || !range) return body;
  const start = range.offset;
  const end = range.length === undefined ? Number.POSITIVE_INFINITY : start + range.length;
  let position = 0;
  const cut = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = Math.max(start - position, 0);
      const to = Math.min(end - position, chunk.length);
      position += chunk.length;
      done(null, from < to ? chunk.subarray(from, to) : undefined);
    },
  });
  body.on('error', (err) => cut.destroy(err));
  return body.pipe(cut);
}
