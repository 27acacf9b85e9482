// Writing an object (after rclone's lib/multipart): a known size up to singleRequestMax is read into
// one buffer, checked, and sent as one PutObject with Content-MD5; anything larger or of unknown size
// is a multipart upload driven here (CreateMultipartUpload, UploadPart, CompleteMultipartUpload), so
// that another process can continue it after a crash: parts come from the shared part pool
// (shared/chunks.ts), a permit taken before each part is read, so memory is at most queueSize x part
// size. The byte count is checked before completing, and the stored size verified afterwards (some
// S3-compatible servers have stored request framing as data). A plain write aborts its upload when it
// fails; a resumable one leaves it for the next attempt, which checks it with ListParts.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import type { ResumableUpload, UploadedPart, UploadLimits, WriteOptions } from '../contract.js';
import { PartReader, readFirst, uploadParts } from '../shared/chunks.js';
import type { MemoryBudget, MemoryWait, Release } from '../shared/memory.js';
import { awsS3 } from '../shared/sdk.js';
import { abortable } from './client.js';
import { isNoSuchUpload, s3Error } from './errors.js';
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
  /** The process's transfer memory (FERRY_TRANSFER_MEMORY): every body part read takes from it. */
  memory?: MemoryBudget;
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
      `an object of ${size} bytes is larger than the provider allows in parts ferry can hold (${limits.maxParts} parts of at most ${limits.maxPartSize} bytes: the provider's limit, or the transfer memory, FERRY_TRANSFER_MEMORY)`,
    );
  }
  return part;
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
    const release = await tuning.memory?.acquire(size, options.signal, options.memoryWait);
    try {
      const data = await readExactly(body, size, what);
      const md5 = await putObject(client, params, data, options.signal, what);
      options.onProgress?.(size);
      return { bytes: size, md5 };
    } finally {
      release?.();
    }
  }

  const reader = new PartReader(body, size);
  const partSize = partSizeFor(size, tuning);
  // Of unknown size: a body that fits in one part is one PutObject, as a multipart upload of one
  // small part would be (an empty body cannot be a multipart upload at all).
  const { data: first, release } = await readFirst(
    reader,
    partSize,
    tuning.memory,
    options.signal,
    options.memoryWait,
  );
  let parts = false; // from here on uploadParts() gives the first part's budget back
  try {
    if (size === undefined && (await reader.atEnd())) {
      const md5 = await putObject(client, params, first, options.signal, what);
      options.onProgress?.(first.length);
      return { bytes: first.length, md5 };
    }
    parts = true;
  } finally {
    if (!parts) release();
  }
  const upload = await beginUpload(client, target, { ...options, partSize }, what).catch((err: unknown) => {
    release();
    throw err;
  });
  try {
    const bytes = await uploadMultipart(
      client,
      target,
      reader,
      { ...options, upload, done: [], first, firstRelease: release },
      tuning,
    );
    return { bytes };
  } catch (err) {
    release(); // given back once: uploadParts may have already
    // A plain write cannot be resumed by anyone: its parts would only cost storage until it expires.
    await abortUpload(client, target, upload).catch(() => undefined);
    throw err;
  }
}

async function putObject(
  client: S3Client,
  params: { Bucket: string; Key: string; ContentType?: string },
  data: Buffer,
  signal: AbortSignal | undefined,
  what: string,
): Promise<string> {
  const { PutObjectCommand } = awsS3();
  const md5 = createHash('md5').update(data).digest();
  try {
    await client.send(
      new PutObjectCommand({
        ...params,
        Body: data,
        ContentLength: data.length,
        ContentMD5: md5.toString('base64'),
      }),
      abortable(signal),
    );
  } catch (err) {
    throw s3Error(err, what);
  }
  return md5.toString('hex');
}

/** CreateMultipartUpload; the part size is fixed here for every later attempt at the upload. */
export async function beginUpload(
  client: S3Client,
  target: S3Path,
  options: { partSize: number; mimeType?: string | undefined; signal?: AbortSignal | undefined },
  what: string,
): Promise<ResumableUpload> {
  const { CreateMultipartUploadCommand } = awsS3();
  try {
    const answer = await client.send(
      new CreateMultipartUploadCommand({
        Bucket: target.bucket,
        Key: target.key,
        ...(options.mimeType ? { ContentType: options.mimeType } : {}),
      }),
      abortable(options.signal),
    );
    if (!answer.UploadId) throw new FerryError('transient', `${what}: the provider gave no upload id`);
    return { uploadId: answer.UploadId, partSize: options.partSize };
  } catch (err) {
    throw s3Error(err, what);
  }
}

/** ListParts, every page: the recorded parts the provider still holds, or undefined for NoSuchUpload. */
export async function heldParts(
  client: S3Client,
  target: S3Path,
  upload: ResumableUpload,
  parts: readonly UploadedPart[],
  signal: AbortSignal | undefined,
  what: string,
): Promise<UploadedPart[] | undefined> {
  const { ListPartsCommand } = awsS3();
  const held = new Map<number, { etag: string; size: number }>();
  let marker: string | undefined;
  try {
    for (;;) {
      const page = await client.send(
        new ListPartsCommand({
          Bucket: target.bucket,
          Key: target.key,
          UploadId: upload.uploadId,
          ...(marker === undefined ? {} : { PartNumberMarker: marker }),
        }),
        abortable(signal),
      );
      for (const part of page.Parts ?? []) {
        if (part.PartNumber !== undefined && part.ETag !== undefined) {
          held.set(part.PartNumber, { etag: part.ETag, size: part.Size ?? -1 });
        }
      }
      if (!page.IsTruncated || page.NextPartNumberMarker === undefined) break;
      marker = page.NextPartNumberMarker;
    }
  } catch (err) {
    if (isNoSuchUpload(err)) return undefined;
    throw s3Error(err, what);
  }
  return parts.filter((part) => {
    const found = held.get(part.index + 1);
    return found !== undefined && found.size === part.size && sameEtag(found.etag, part.tag);
  });
}

/** AbortMultipartUpload; an upload the provider no longer knows is already gone. */
export async function abortUpload(
  client: S3Client,
  target: S3Path,
  upload: ResumableUpload,
  signal?: AbortSignal,
): Promise<void> {
  const { AbortMultipartUploadCommand } = awsS3();
  try {
    await client.send(
      new AbortMultipartUploadCommand({ Bucket: target.bucket, Key: target.key, UploadId: upload.uploadId }),
      abortable(signal),
    );
  } catch (err) {
    if (isNoSuchUpload(err)) return;
    throw s3Error(err, `abort the upload to ${target.bucket}/${target.key}`);
  }
}

export interface MultipartOptions {
  size?: number | undefined;
  signal?: AbortSignal | undefined;
  /** What else ends a part's wait for room in the transfer memory (WriteOptions.memoryWait). */
  memoryWait?: MemoryWait | undefined;
  onProgress?: ((bytesDone: number) => void) | undefined;
  upload: ResumableUpload;
  /** Parts already uploaded (from part 1 on); the reader gives the bytes after them. */
  done: readonly UploadedPart[];
  /** Parts further on that S3 still holds: read from the reader but not sent again. */
  kept?: readonly UploadedPart[] | undefined;
  /** The next part, when already read from the reader. */
  first?: Buffer;
  /** Gives back the budget `first` took; called once it is sent (or not). */
  firstRelease?: Release;
  onPart?: (part: UploadedPart) => Promise<void>;
}

/**
 * UploadPart for every remaining part (a permit taken before each part is read, so memory is at most
 * queueSize x partSize), then CompleteMultipartUpload with every part. Resolves with the object's size.
 */
export async function uploadMultipart(
  client: S3Client,
  target: S3Path,
  reader: PartReader,
  options: MultipartOptions,
  tuning: UploadTuning,
): Promise<number> {
  const { CompleteMultipartUploadCommand, UploadPartCommand } = awsS3();
  const what = `write ${target.bucket}/${target.key}`;
  const { upload, done, signal } = options;
  const before = done.reduce((n, part) => n + part.size, 0);
  const completed: CompletedPart[] = done.map((part) => ({ PartNumber: part.index + 1, ETag: part.tag }));
  const kept = new Map((options.kept ?? []).map((part) => [part.index, part]));
  const { size: sent } = await uploadParts({
    reader,
    partSize: upload.partSize,
    concurrency: tuning.queueSize,
    maxParts: tuning.limits.maxParts - done.length,
    signal,
    ...(options.first === undefined ? {} : { first: options.first, firstRelease: options.firstRelease }),
    memory: tuning.memory,
    memoryWait: options.memoryWait,
    onProgress: (bytes) => options.onProgress?.(before + bytes),
    uploadPart: async ({ index, data }) => {
      const number = done.length + index + 1;
      const held = kept.get(number - 1);
      if (held !== undefined && held.size === data.length) {
        completed[number - 1] = { PartNumber: number, ETag: held.tag };
        return;
      }
      let etag: string | undefined;
      try {
        const answer = await client.send(
          new UploadPartCommand({
            Bucket: target.bucket,
            Key: target.key,
            UploadId: upload.uploadId,
            PartNumber: number,
            Body: data,
            ContentLength: data.length,
          }),
          abortable(signal),
        );
        etag = answer.ETag;
      } catch (err) {
        throw s3Error(err, `${what}: part ${number}`);
      }
      if (etag === undefined) throw new FerryError('transient', `${what}: part ${number} has no ETag`);
      completed[number - 1] = { PartNumber: number, ETag: etag };
      await options.onPart?.({ index: number - 1, tag: etag, size: data.length });
    },
  });
  const total = before + sent;
  if (options.size !== undefined && total !== options.size) throw mismatch(what, options.size, String(total));
  try {
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: target.bucket,
        Key: target.key,
        UploadId: upload.uploadId,
        MultipartUpload: { Parts: completed },
      }),
      abortable(signal),
    );
  } catch (err) {
    throw s3Error(err, what);
  }
  return total;
}

/** ETags compared as S3 defines them: the quotes are not part of the value. */
export function sameEtag(a: string, b: string): boolean {
  return a.replaceAll('"', '') === b.replaceAll('"', '');
}
