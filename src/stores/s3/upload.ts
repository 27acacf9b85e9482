// Writing an object (after rclone's lib/multipart): a known size up to singleRequestMax is read into
// one buffer, checked, and sent as one PutObject with Content-MD5; anything larger or of unknown size
// is a multipart upload driven here (CreateMultipartUpload, UploadPart, CompleteMultipartUpload), so
// that another process can continue it after a crash: parts come from the shared part pool
// (shared/chunks.ts), a permit taken before each part is read, so memory is at most queueSize x part
// size. The byte count is checked before completing, and the stored size verified afterwards (some
// S3-compatible servers have stored request framing as data). A plain write aborts its upload when it
// fails; a resumable one leaves it for the next attempt, which checks it with ListParts.
//
// Every byte is proven (docs/api.md, "Verification"): each request carries Content-MD5, so S3 refuses
// a body damaged on the way (BadDigest); each part's ETag is compared with the MD5 of the bytes sent;
// and the multipart ETag S3 computes, the MD5 of the parts' MD5s and their count, is computed here and
// compared with CompleteMultipartUpload's. The MD5s are computed on the hashing thread.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import type { ResumableUpload, UploadedPart, UploadLimits, WriteOptions } from '../contract.js';
import { PartReader, readFirst, uploadParts } from '../shared/chunks.js';
import { digestOf } from '../shared/hash-thread.js';
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

/** What an upload sent, for the store to compare with what S3 says it stored. */
export interface Sent {
  bytes: number;
  /** A single request's body: its MD5, hex. */
  md5?: string;
  /**
   * A multipart upload: its ETag as S3 computes it from the MD5s of the parts sent (undefined when a
   * part's ETag is not its MD5, as under SSE-KMS), and the ETag CompleteMultipartUpload answered.
   */
  multipart?: { expected: string | undefined; stored: string | undefined };
}

/** Uploads the body; resolves with what was sent. The caller verifies what was stored. */
export async function uploadObject(
  client: S3Client,
  target: S3Path,
  body: Readable,
  options: WriteOptions,
  tuning: UploadTuning,
): Promise<Sent> {
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
      const md5 = await putObject(client, params, data, options, what);
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
      const md5 = await putObject(client, params, first, options, what);
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
    return await uploadMultipart(
      client,
      target,
      reader,
      { ...options, upload, done: [], first, firstRelease: release },
      tuning,
    );
  } catch (err) {
    release(); // given back once: uploadParts may have already
    // A plain write cannot be resumed by anyone: its parts would only cost storage until it expires.
    await abortUpload(client, target, upload).catch(() => undefined);
    throw err;
  }
}

/** One PutObject of the whole body, which has ended (so its bodyHashes hold). */
async function putObject(
  client: S3Client,
  params: { Bucket: string; Key: string; ContentType?: string },
  data: Buffer,
  { signal, bodyHashes }: WriteOptions,
  what: string,
): Promise<string> {
  const { PutObjectCommand } = awsS3();
  const md5 =
    bodyHashes?.md5 === undefined ? await digestOf('md5', data) : Buffer.from(bodyHashes.md5, 'hex');
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

/** MD5 from an ETag, which is the object's MD5 only for single-request uploads without SSE-KMS. */
export function md5FromEtag(head: {
  ETag?: string | undefined;
  ServerSideEncryption?: string | undefined;
}): string | undefined {
  const etag = head.ETag?.replaceAll('"', '').toLowerCase();
  if (!etag || !/^[0-9a-f]{32}$/.test(etag)) return undefined;
  if (head.ServerSideEncryption === 'aws:kms' || head.ServerSideEncryption === 'aws:kms:dsse')
    return undefined;
  return etag;
}

/** md5FromEtag's MD5 as bytes, for the multipart ETag and a part's comparison with what was sent. */
function md5BytesOfEtag(etag: string | undefined): Buffer | undefined {
  const hex = md5FromEtag({ ETag: etag });
  return hex === undefined ? undefined : Buffer.from(hex, 'hex');
}

/**
 * The ETag S3 gives an object uploaded in parts: the MD5 of the parts' MD5s (as bytes, in part order),
 * a hyphen and the number of parts; undefined when a part's MD5 is not known.
 */
export function multipartEtag(md5s: ReadonlyArray<Buffer | undefined>): string | undefined {
  if (md5s.some((md5) => md5 === undefined)) return undefined;
  const all = Buffer.concat(md5s as Buffer[]);
  return `${createHash('md5').update(all).digest('hex')}-${md5s.length}`;
}

/**
 * UploadPart for every remaining part (a permit taken before each part is read, so memory is at most
 * queueSize x partSize), then CompleteMultipartUpload with every part. Resolves with the object's size
 * and its ETag computed from the parts' MD5s beside the one S3 answered.
 */
export async function uploadMultipart(
  client: S3Client,
  target: S3Path,
  reader: PartReader,
  options: MultipartOptions,
  tuning: UploadTuning,
): Promise<Sent> {
  const { CompleteMultipartUploadCommand, UploadPartCommand } = awsS3();
  const what = `write ${target.bucket}/${target.key}`;
  const { upload, done, signal } = options;
  const before = done.reduce((n, part) => n + part.size, 0);
  const completed: CompletedPart[] = done.map((part) => ({ PartNumber: part.index + 1, ETag: part.tag }));
  // The parts' MD5s, for the multipart ETag: a recorded part's tag is the ETag S3 gave it, which was
  // compared with the MD5 of its bytes when it was sent.
  const md5s: Array<Buffer | undefined> = done.map((part) => md5BytesOfEtag(part.tag));
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
      // The part's buffer is reused once the upload is done with it: hashed first, in place.
      const md5 = await digestOf('md5', data);
      // A part S3 still holds is kept when it holds these bytes (its ETag is their MD5).
      if (held !== undefined && held.size === data.length && md5BytesOfEtag(held.tag)?.equals(md5)) {
        completed[number - 1] = { PartNumber: number, ETag: held.tag };
        md5s[number - 1] = md5;
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
            ContentMD5: md5.toString('base64'),
          }),
          abortable(signal),
        );
        etag = answer.ETag;
      } catch (err) {
        throw s3Error(err, `${what}: part ${number}`);
      }
      if (etag === undefined) throw new FerryError('transient', `${what}: part ${number} has no ETag`);
      // An ETag of MD5 form must be the MD5 sent; another form (SSE-KMS) proves nothing either way,
      // and leaves the multipart ETag uncomputed.
      const stored = md5BytesOfEtag(etag);
      if (stored !== undefined && !stored.equals(md5)) {
        throw new FerryError(
          'transient',
          `${what}: part ${number}: S3 stored bytes whose MD5 (${stored.toString('hex')}) is not that of the bytes sent (${md5.toString('hex')})`,
        );
      }
      md5s[number - 1] = stored;
      completed[number - 1] = { PartNumber: number, ETag: etag };
      await options.onPart?.({ index: number - 1, tag: etag, size: data.length });
    },
  });
  const total = before + sent;
  if (options.size !== undefined && total !== options.size) throw mismatch(what, options.size, String(total));
  let stored: string | undefined;
  try {
    const answer = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: target.bucket,
        Key: target.key,
        UploadId: upload.uploadId,
        MultipartUpload: { Parts: completed },
      }),
      abortable(signal),
    );
    stored = answer.ETag;
  } catch (err) {
    throw s3Error(err, what);
  }
  return { bytes: total, multipart: { expected: multipartEtag(md5s), stored } };
}

/** ETags compared as S3 defines them: the quotes are not part of the value. */
export function sameEtag(a: string, b: string): boolean {
  return a.replaceAll('"', '') === b.replaceAll('"', '');
}
