// The S3-family store: s3, r2, wasabi and b2 through the AWS SDK v3 (client.ts builds the client,
// endpoint.ts derives where it points, errors.ts reads every failure, list.ts / upload.ts / copy.ts do
// the work). Paths are "bucket/key" (contract glossary).
import type { Readable } from 'node:stream';
import type { HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import { isS3Family } from '../../providers.js';
import type { StoreContext, StoreLocation } from '../context.js';
import type {
  CallOptions,
  CopyOptions,
  Entry,
  ListOptions,
  ObjectInfo,
  ReadOptions,
  ResumableWriteOptions,
  ResumableWrites,
  Store,
  StoreFeatures,
  WriteOptions,
} from '../contract.js';
import { PartReader } from '../shared/chunks.js';
import { largestPart, type MemoryBudget } from '../shared/memory.js';
import { awsS3 } from '../shared/sdk.js';
import { s3BucketCreation } from './buckets.js';
import { abortable, createClient, type S3Handle } from './client.js';
import { COPY_OBJECT_MAX, type CopyAnswer, copyObject } from './copy.js';
import { declarations } from './declaration.js';
import { isBodilessAuthError, isPreconditionFailed, s3Error } from './errors.js';
import { listS3 } from './list.js';
import { type S3Path, splitPath } from './paths.js';
import { readObject } from './read.js';
import {
  abortUpload,
  beginUpload,
  heldParts,
  md5FromEtag,
  partSizeFor,
  S3_UPLOAD_LIMITS,
  type Sent,
  sameEtag,
  type UploadTuning,
  uploadMultipart,
  uploadObject,
} from './upload.js';

const MiB = 1024 * 1024;

/** Knobs tests turn down so paging and multipart are exercised with little data. */
export interface S3Tuning {
  /** Listing page size (MaxKeys); default: the server's (1,000 on S3). */
  pageSize?: number;
  /** Multipart part size; default 8 MiB (grown for large known sizes). */
  partSize?: number;
  /** Parts in flight per upload; default 4. */
  queueSize?: number;
  /** Largest single-request upload; default 16 MiB. */
  singleRequestMax?: number;
}

export { checkMetadata } from './metadata.js';

export function open(location: StoreLocation, ctx: StoreContext): Store {
  return createS3Store(location, ctx);
}

export function createS3Store(location: StoreLocation, ctx: StoreContext, tuning: S3Tuning = {}): Store {
  const provider = location.provider;
  if (!isS3Family(provider))
    throw new FerryError('internal', `the S3 store cannot open a ${provider} location`);
  return new S3Store(createClient(provider, location, ctx), location, tuning, ctx.memory);
}

function infoFrom(path: string, head: HeadObjectCommandOutput): ObjectInfo {
  const info: ObjectInfo = { path, size: head.ContentLength ?? 0, hashes: {} };
  if (head.ETag) info.etag = head.ETag;
  if (head.LastModified) info.modTime = head.LastModified;
  if (head.ContentType) info.mimeType = head.ContentType;
  const md5 = md5FromEtag(head);
  if (md5) info.hashes.md5 = md5;
  return info;
}

class S3Store implements Store {
  readonly provider;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #handle: S3Handle;
  readonly #tuning: S3Tuning;
  readonly #upload: UploadTuning;

  constructor(handle: S3Handle, location: StoreLocation, tuning: S3Tuning, memory?: MemoryBudget) {
    this.provider = location.provider;
    this.#handle = handle;
    this.#tuning = tuning;
    this.account = handle.account;
    const limits = {
      ...S3_UPLOAD_LIMITS,
      // No part larger than ferry reads into memory: a body that would need one is refused (413)
      // before anything is taken or allocated (docs/api.md, "Files through ferry"). A store without a
      // budget (some store tests) states the provider's; readFirst and uploadParts still refuse a
      // part past Node's largest buffer.
      maxPartSize: memory
        ? Math.min(S3_UPLOAD_LIMITS.maxPartSize, largestPart(memory))
        : S3_UPLOAD_LIMITS.maxPartSize,
      ...(tuning.singleRequestMax === undefined ? {} : { singleRequestMax: tuning.singleRequestMax }),
    };
    this.#upload = {
      limits,
      partSize: tuning.partSize ?? 8 * MiB,
      queueSize: tuning.queueSize ?? 4,
      ...(memory ? { memory } : {}),
    };
    this.features = {
      bucketListing: declarations[handle.provider].features.bucketListing,
      hashes: declarations[handle.provider].hashes,
      upload: limits,
      copy: (from, to, options) => this.#copy(from, to, options),
      resumable: this.#resumable(),
      createBucket: s3BucketCreation(handle.provider, handle),
    };
  }

  get #client() {
    return this.#handle.client;
  }

  list(path: string, options: ListOptions = {}): AsyncIterable<Entry> {
    return listS3(this.#client, path, options, { pageSize: this.#tuning.pageSize });
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    return infoFrom(path, await this.#head(splitPath(path), `stat ${path}`, options.signal));
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    const target = splitPath(path);
    const what = `read ${path}`;
    return readObject(this.#client, target, options, what, () => this.#head(target, what, options.signal));
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    const sent = await uploadObject(this.#client, splitPath(path), body, options, this.#upload);
    return this.#verifyWritten(path, sent, options.signal);
  }

  /** Multipart uploads continued from their first missing part (ListParts says what S3 still holds). */
  #resumable(): ResumableWrites {
    return {
      begin: (path, options) =>
        beginUpload(
          this.#client,
          splitPath(path),
          { ...options, partSize: partSizeFor(options.size, this.#upload) },
          `write ${path}`,
        ),
      check: (path, upload, parts, options = {}) =>
        heldParts(this.#client, splitPath(path), upload, parts, options.signal, `write ${path}`),
      write: (path, body, options) => this.#resumeWrite(path, body, options),
      abort: (path, upload, options = {}) =>
        abortUpload(this.#client, splitPath(path), upload, options.signal),
    };
  }

  async #resumeWrite(path: string, body: Readable, options: ResumableWriteOptions): Promise<ObjectInfo> {
    const before = options.done.reduce((n, part) => n + part.size, 0);
    const reader = new PartReader(body, options.size - before);
    try {
      const sent = await uploadMultipart(this.#client, splitPath(path), reader, options, this.#upload);
      return await this.#verifyWritten(path, sent, options.signal);
    } catch (err) {
      body.destroy();
      throw err;
    }
  }

  /**
   * What S3 stored, against what was sent: the size, then the MD5 (a single request's ETag) or the
   * multipart ETag (docs/api.md, "Verification"). An object that differs is removed, and the write
   * fails as transient.
   */
  async #verifyWritten(path: string, sent: Sent, signal: AbortSignal | undefined): Promise<ObjectInfo> {
    const target = splitPath(path);
    const what = `write ${path}`;
    // Verify what was stored: some S3-compatible servers have stored request framing as data.
    const head = await this.#head(target, what, signal);
    if (head.ContentLength !== sent.bytes) {
      throw await this.#discard(
        target,
        `${what}: the provider stored ${head.ContentLength} bytes of ${sent.bytes} sent`,
      );
    }
    const info = infoFrom(path, head);
    if (sent.md5 !== undefined && info.hashes.md5 !== undefined) {
      if (sent.md5 !== info.hashes.md5) {
        throw await this.#discard(
          target,
          `${what}: the stored object's MD5 (${info.hashes.md5}) is not that of the bytes sent (${sent.md5})`,
        );
      }
      info.verified = ['md5'];
    }
    // A multipart ETag of S3's form (hex MD5, hyphen, count) must be the one computed from the parts
    // sent; a server that gives another form (SSE-KMS) proves nothing either way.
    const stored = (sent.multipart?.stored ?? head.ETag)?.replaceAll('"', '').toLowerCase();
    const expected = sent.multipart?.expected;
    if (expected !== undefined && stored !== undefined && /^[0-9a-f]{32}-\d+$/.test(stored)) {
      if (stored !== expected) {
        throw await this.#discard(
          target,
          `${what}: the stored object's multipart ETag (${stored}) is not that of the parts sent (${expected})`,
        );
      }
      info.verified = ['md5'];
    }
    return info;
  }

  /** Removes an object that is not what was sent; the write's failure, transient, to throw. */
  async #discard(target: S3Path, reason: string): Promise<FerryError> {
    const { DeleteObjectCommand } = awsS3();
    await this.#client
      .send(new DeleteObjectCommand({ Bucket: target.bucket, Key: target.key }))
      .catch(() => {});
    return new FerryError('transient', `${reason}; the object was removed`);
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    const { DeleteObjectCommand } = awsS3();
    const target = splitPath(path);
    const what = `delete ${path}`;
    // S3's DeleteObject succeeds on a missing key; the contract wants not_found.
    await this.#head(target, what, options.signal);
    try {
      await this.#client.send(
        new DeleteObjectCommand({ Bucket: target.bucket, Key: target.key }),
        abortable(options.signal),
      );
    } catch (err) {
      throw s3Error(err, what);
    }
  }

  async close(): Promise<void> {
    // Nothing to release: the sockets belong to the egress guard's agents, shared by every store.
    // (S3Client.destroy() would destroy those agents' sockets, in-flight requests of other stores
    // included, so it is never called.)
  }

  async #copy(fromPath: string, toPath: string, options: CopyOptions = {}): Promise<ObjectInfo> {
    const from = splitPath(fromPath);
    const to = splitPath(toPath);
    const what = `copy ${fromPath} to ${toPath}`;
    // What the caller knows of a source that fits one CopyObject (its size and the ETag its listing
    // gave) saves a HEAD; a larger object needs one (its content type goes into the multipart copy).
    const known = options.source;
    const source =
      known !== undefined && known.size <= COPY_OBJECT_MAX
        ? { ContentLength: known.size, ...(known.etag === undefined ? {} : { ETag: known.etag }) }
        : await this.#head(from, what, options.signal);
    let answer: CopyAnswer;
    try {
      answer = await copyObject(this.#client, from, to, source, options.signal);
    } catch (err) {
      if (source.ETag !== undefined && isPreconditionFailed(err)) {
        throw new FerryError('transient', `${what}: the source changed since it was listed`, { cause: err });
      }
      throw s3Error(err, what);
    }
    // The copy was pinned to the source's ETag (x-amz-copy-source-if-match) and the new object has
    // the same ETag: the same content, so the same size. Anything else (SSE-KMS and multipart ETags
    // are not content hashes, servers that ignore the condition) is checked by a HEAD of the copy.
    if (source.ETag !== undefined && answer.etag !== undefined && sameEtag(answer.etag, source.ETag)) {
      const info: ObjectInfo = {
        path: toPath,
        size: source.ContentLength ?? 0,
        hashes: {},
        etag: answer.etag,
      };
      const md5 = md5FromEtag({ ETag: answer.etag, ServerSideEncryption: answer.serverSideEncryption });
      // The provider's MD5 of the new object is that of the version of the source it was pinned to
      // (docs/api.md, "Verification": a server-side copy is proven by what the provider reports).
      if (md5) {
        info.hashes.md5 = md5;
        info.verified = ['md5'];
      }
      if (answer.lastModified) info.modTime = answer.lastModified;
      return info;
    }
    return infoFrom(toPath, await this.#head(to, what, options.signal));
  }

  /**
   * HeadObject. A HEAD answer has no body, so a 403 does not say whether the key was rejected
   * (InvalidAccessKeyId) or the object is off limits; a one-byte GET then asks for the real code.
   */
  async #head(target: S3Path, what: string, signal?: AbortSignal): Promise<HeadObjectCommandOutput> {
    const { GetObjectCommand, HeadObjectCommand } = awsS3();
    try {
      return await this.#client.send(
        new HeadObjectCommand({ Bucket: target.bucket, Key: target.key }),
        abortable(signal),
      );
    } catch (err) {
      if (!isBodilessAuthError(err)) throw s3Error(err, what);
      try {
        const probe = await this.#client.send(
          new GetObjectCommand({ Bucket: target.bucket, Key: target.key, Range: 'bytes=0-0' }),
          abortable(signal),
        );
        (probe.Body as Readable | undefined)?.destroy();
      } catch (detail) {
        throw s3Error(detail, what);
      }
      throw s3Error(err, what);
    }
  }
}
