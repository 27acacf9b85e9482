// What the bytes of a file through ferry are held to on their way (docs/api.md, "Files through ferry"):
// the most an upload may hold on its store (largestUpload, and tooLarge when a body passes it), an
// upload's body counted against that most and watched for a client gone quiet (UploadBody), and a
// download's bytes counted as they leave (counted). src/domain/files.ts puts them in the pipeline.
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { LocationRow } from '../db/schema.js';
import { FerryError } from '../errors.js';
import type { UploadLimits } from '../stores/contract.js';

/**
 * The largest upload a store's limits allow: of a known size, its largest part as many times as it may
 * have parts; of unknown size (no Content-Length), its smallest part as many times, since a store must
 * choose its part size before it knows how much comes (docs/api.md, "Files through ferry").
 */
export function largestUpload(limits: UploadLimits, sizeKnown: boolean): number {
  const part = sizeKnown ? limits.maxPartSize : limits.minPartSize;
  return Math.min(Number.MAX_SAFE_INTEGER, part * limits.maxParts);
}

/** 413: the body is larger than the location's store can take. */
export function tooLarge(size: number | undefined, limit: number, row: LocationRow): FerryError {
  const where = `location ${row.label} (${row.provider})`;
  return new FerryError(
    'too_large',
    size === undefined
      ? `the body passed ${limit} bytes, the most an upload without Content-Length may hold on ${where}; send Content-Length for a larger file`
      : `a body of ${Number.isSafeInteger(size) ? size : `more than ${Number.MAX_SAFE_INTEGER}`} bytes is larger than ${limit} bytes, the most a file may hold on ${where}`,
  );
}

/**
 * The upload's bytes on their way to the store: counted (the limit, the metrics) and watched for a
 * client that stops sending (stalled, after `idleMs` without a byte). The idle timer fires only while
 * ferry waits on the client: when the store is the slow side, bytes wait here (writableLength) and the
 * timer starts again.
 */
export class UploadBody extends Transform {
  bytes = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly limit: number,
    private readonly idleMs: number,
    private readonly onBytes: (bytes: number) => void,
    private readonly overLimit: () => Error,
  ) {
    super();
    this.#timer = setTimeout(() => this.#idle(), idleMs);
    this.once('close', () => clearTimeout(this.#timer));
  }

  #idle(): void {
    if (this.destroyed) return;
    if (this.writableLength > 0 || this.readableLength >= this.readableHighWaterMark) {
      this.#timer.refresh();
      return;
    }
    this.destroy(
      new FerryError(
        'stalled',
        `no byte of the body arrived for ${this.idleMs / 1000} s; the upload was stopped`,
      ),
    );
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) {
      done(this.overLimit());
      return;
    }
    this.#timer.refresh();
    this.onBytes(chunk.length);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    clearTimeout(this.#timer);
    done();
  }
}

/** A download's bytes, counted as they leave. An error of the source ends the count; its end the source. */
export function counted(body: Readable, onBytes: (bytes: number) => void): Transform {
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  body.once('error', (err) => meter.destroy(err));
  meter.once('close', () => body.destroy());
  return body.pipe(meter);
}
