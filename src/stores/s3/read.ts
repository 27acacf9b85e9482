// Reading an object as a stream, with an optional byte range. The answer is checked against what
// was asked: the bytes must match the Content-Length when there is one (a connection cut mid-body is
// a transient error, never a short object), and the served range is taken from Content-Range, so a server that
// ignores or widens the Range header (some S3-compatible gateways answer 200 with the whole object;
// s3rver reads "bytes=0-0" as "bytes=0-") still yields exactly the requested bytes.
import { PassThrough, type Readable, Transform, type TransformCallback } from 'node:stream';
import type { GetObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import type { ReadOptions } from '../contract.js';
import { awsS3 } from '../shared/sdk.js';
import { abortable } from './client.js';
import { isPreconditionFailed, s3Error } from './errors.js';
import type { S3Path } from './paths.js';

/**
 * Drops `skip` bytes, passes `take` bytes, then calls `done`; fails if the body ends short. Without a
 * `take` (the answer had no Content-Length), passes all that comes: the caller counts it.
 */
class RangeSlice extends Transform {
  private skipped = 0;
  private passed = 0;
  private complete = false;
  constructor(
    private readonly skip: number,
    private readonly wanted: number | undefined,
    private readonly what: string,
    private readonly done: () => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    if (this.complete) {
      callback();
      return;
    }
    let buf = chunk;
    if (this.skipped < this.skip) {
      const n = Math.min(this.skip - this.skipped, buf.length);
      this.skipped += n;
      buf = buf.subarray(n);
    }
    if (buf.length > 0) {
      const out = this.wanted === undefined ? buf : buf.subarray(0, this.wanted - this.passed);
      this.passed += out.length;
      if (out.length > 0) this.push(out);
    }
    if (this.wanted !== undefined && this.passed === this.wanted && !this.complete) {
      this.complete = true;
      process.nextTick(this.done);
    }
    callback();
  }
  override _flush(callback: TransformCallback): void {
    if (this.wanted !== undefined && this.passed !== this.wanted) {
      callback(
        new FerryError(
          'transient',
          `${this.what}: the connection ended after ${this.passed} of ${this.wanted} bytes`,
        ),
      );
      return;
    }
    callback();
  }
}

/** The first byte the answer holds: from Content-Range on a 206, 0 on a whole-object answer. */
function servedStart(answer: GetObjectCommandOutput, what: string): number {
  if (!answer.ContentRange) return 0;
  const match = /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(answer.ContentRange.trim());
  if (!match) throw new FerryError('transient', `${what}: unreadable Content-Range "${answer.ContentRange}"`);
  return Number(match[1]);
}

function emptyStream(): Readable {
  const out = new PassThrough();
  out.end();
  return out;
}

export async function readObject(
  client: S3Client,
  target: S3Path,
  options: ReadOptions,
  what: string,
  head: () => Promise<unknown>,
): Promise<Readable> {
  const { GetObjectCommand } = awsS3();
  const range = options.range ?? { offset: 0 };
  if (!Number.isSafeInteger(range.offset) || range.offset < 0) {
    throw new FerryError('invalid', `${what}: the range offset must be a whole number of bytes`);
  }
  if (range.length !== undefined && (!Number.isSafeInteger(range.length) || range.length < 0)) {
    throw new FerryError('invalid', `${what}: the range length must be a whole number of bytes`);
  }
  if (range.length === 0) {
    await head(); // not_found still applies
    return emptyStream();
  }
  // No Range header for the whole object: S3 answers 416 to "bytes=0-" on an empty one.
  const header =
    range.offset === 0 && range.length === undefined
      ? undefined
      : `bytes=${range.offset}-${range.length === undefined ? '' : range.offset + range.length - 1}`;

  let answer: GetObjectCommandOutput;
  try {
    answer = await client.send(
      new GetObjectCommand({
        Bucket: target.bucket,
        Key: target.key,
        ...(header ? { Range: header } : {}),
        ...(options.ifMatch === undefined ? {} : { IfMatch: options.ifMatch }),
      }),
      abortable(options.signal),
    );
  } catch (err) {
    if (options.ifMatch !== undefined && isPreconditionFailed(err)) {
      throw new FerryError('transient', `${what}: the object changed since it was listed`, { cause: err });
    }
    throw s3Error(err, what);
  }
  const body = answer.Body as Readable | undefined;
  const served = answer.ContentLength;
  let start: number;
  try {
    start = servedStart(answer, what);
    if (start > range.offset)
      throw new FerryError('transient', `${what}: the provider served bytes from ${start}`);
  } catch (err) {
    body?.destroy();
    throw err;
  }
  const skip = range.offset - start;
  // No Content-Length (an S3-compatible gateway answering chunked, or until its connection ends):
  // how much there is, only the body says, and the caller counts it (a copy against the object's
  // size). Taken as 0, such an answer read as an empty stream.
  const available = served === undefined ? undefined : Math.max(0, served - skip);
  const take =
    range.length === undefined
      ? available
      : available === undefined
        ? range.length
        : Math.min(range.length, available);
  if (!body) {
    if (take !== 0 && take !== undefined) {
      throw new FerryError('transient', `${what}: the provider sent no body`);
    }
    return emptyStream();
  }

  let finished = false;
  const slice = new RangeSlice(skip, take, what, () => {
    // Everything asked for has arrived; the rest of an over-long answer is not read.
    finished = true;
    body.unpipe(slice);
    body.destroy();
    slice.end();
  });
  body.on('error', (err) => {
    if (!finished) slice.destroy(s3Error(err, what));
  });
  slice.on('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  if (take === 0) {
    finished = true;
    body.destroy();
    return emptyStream();
  }
  return body.pipe(slice);
}
