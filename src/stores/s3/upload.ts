// Writing an object (after rclone's lib/multipart): a known size up to singleRequestMax is read into
// one buffer, checked, and sent as one PutObject with Content-MD5; anything larger or of unknown size
// goes through lib-storage's managed multipart upload, which holds at most queueSize parts in memory
// and aborts the upload when anything fails. A size-checking stream sits in every pipeline, so a
// stream shorter or longer than declared fails before the upload is completed, and the stored size is
// verified afterwards (some S3-compatible servers have stored request framing as data).
import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { FerryError } from '../../errors.js';
import type { UploadLimits, WriteOptions } from '../contract.js';
import { abortable } from './client.js';
import { s3Error } from './errors.js';
import type { S3Path } from './paths.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** S3's multipart limits (docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html). */
export const S3_UPLOAD_LIMITS: UploadLimits = {
  minPartSize: 5 * MiB,
  maxPartSize: 5 * GiB,
  maxParts: 10_000,
  singleRequestMax: 16 * MiB,
};

export interface UploadTuning {
  limits: UploadLimits;
  /** Part size for uploads of unknown size, and the least part size for known ones. */
  partSize: number;
  /** Parts in flight at once; memory is at most queueSize x partSize per upload. */
  queueSize: number;
}

/** The part size for an upload: the preferred size, grown (in whole MiB) until `size` fits in maxParts. */
export function partSizeFor(size: number | undefined, tuning: UploadTuning): number {
  const { limits } = tuning;
  let part = Math.max(tuning.partSize, limits.minPartSize);
  if (size !== undefined) {
    const needed = Math.ceil(Math.ceil(size / limits.maxParts) / MiB) * MiB;
    part = Math.max(part, needed);
  }
  if (part > limits.maxPartSize) {
    throw new FerryError(
      'invalid',
      `an object of ${size} bytes is larger than the provider allows (${limits.maxParts} parts of at most ${limits.maxPartSize} bytes)`,
    );
  }
  return part;
}

/** Counts bytes through, and fails the stream when they do not match the declared size. */
class SizeCheck extends Transform {
  bytes = 0;
  constructor(
    private readonly declared: number | undefined,
    private readonly what: string,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.declared !== undefined && this.bytes > this.declared) {
      callback(mismatch(this.what, this.declared, `more than ${this.declared}`));
      return;
    }
    callback(null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    if (this.declared !== undefined && this.bytes !== this.declared) {
      callback(mismatch(this.what, this.declared, String(this.bytes)));
      return;
    }
    callback();
  }
}

function mismatch(what: string, declared: number, got: string): FerryError {
  return new FerryError('invalid', `${what}: the stream gave ${got} bytes, but ${declared} were declared`);
}

/** Reads a stream of declared size into one buffer, failing as soon as it is longer or when shorter. */
async function readExactly(body: Readable, size: number, what: string): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(size);
  let at = 0;
  for await (const chunk of body) {
    const buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    if (at + buf.length > size) {
      body.destroy();
      throw mismatch(what, size, `more than ${size}`);
    }
    buf.copy(buffer, at);
    at += buf.length;
  }
  if (at !== size) throw mismatch(what, size, String(at));
  return buffer;
}

/** Uploads the body; resolves with the number of bytes sent. The caller verifies what was stored. */
export async function uploadObject(
  client: S3Client,
  target: S3Path,
  body: Readable,
  options: WriteOptions,
  tuning: UploadTuning,
): Promise<{ bytes: number; md5?: string }> {
  const what = `write ${target.bucket}/${target.key}`;
  const { size } = options;
  if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) {
    throw new FerryError('invalid', `${what}: size must be a whole number of bytes`);
  }
  const params = {
    Bucket: target.bucket,
    Key: target.key,
    ...(options.mimeType ? { ContentType: options.mimeType } : {}),
  };

  if (size !== undefined && size <= tuning.limits.singleRequestMax) {
    const data = await readExactly(body, size, what);
    const md5 = createHash('md5').update(data).digest();
    try {
      await client.send(
        new PutObjectCommand({
          ...params,
          Body: data,
          ContentLength: size,
          ContentMD5: md5.toString('base64'),
        }),
        abortable(options.signal),
      );
    } catch (err) {
      throw s3Error(err, what);
    }
    options.onProgress?.(size);
    return { bytes: size, md5: md5.toString('hex') };
  }

  const check = new SizeCheck(size, what);
  body.on('error', (err) => check.destroy(err));
  body.pipe(check);
  const upload = new Upload({
    client,
    params: { ...params, Body: check, ...(size === undefined ? {} : { ContentLength: size }) },
    partSize: partSizeFor(size, tuning),
    queueSize: tuning.queueSize,
    leavePartsOnError: false,
  });
  let done = 0;
  upload.on('httpUploadProgress', (progress) => {
    if (progress.loaded !== undefined && progress.loaded > done) {
      done = progress.loaded;
      options.onProgress?.(done);
    }
  });
  const onAbort = () => void upload.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await upload.done();
  } catch (err) {
    body.unpipe(check);
    body.resume();
    throw s3Error(err, what);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (done !== check.bytes) options.onProgress?.(check.bytes);
  return { bytes: check.bytes };
}
