// The contract every storage backend implements: a small required core and optional features a
// store declares once and callers discover (after rclone's fs.Fs / fs.Features split).
//
// Glossary
// - path: a location-relative path with no leading or trailing "/", used verbatim as exact bytes.
//   On bucket stores (S3 family, gcs, azureblob) the first segment is the bucket or container:
//   "bucket/dir/file.txt". On folder stores (dropbox, drive, onedrive, box) it starts at the root
//   folder: "dir/file.txt". "" is the root.
// - folder: on bucket stores a key prefix that ends in "/"; on folder stores a real folder.
// - account: a non-secret identity of the credentials and endpoint behind a store. Two stores with the
//   same account can copy or move server-side between their paths.
//
// Rules every store keeps
// - Stores never retry. They make one attempt and classify failures as FerryError kinds (not_found,
//   credentials_rejected, throttled with retryAfterSeconds, transient, invalid, unsupported); the
//   operations layer owns retries and backoff. Each store reads its provider's error shapes in exactly
//   one function (its errors.ts).
// - Error messages keep the provider's own words and never contain a secret.
// - Memory stays bounded: list() streams page by page, write() holds at most
//   concurrency x part size, read() is a stream.
// - Folders are created as needed by write() on folder stores.
import type { Readable } from 'node:stream';
import type { Provider } from '../providers.js';
import type { HashKind } from './declaration.js';
import type { MemoryWait } from './shared/memory.js';

export type { HashKind };

/** One listing entry (docs/api.md, "Listing objects"); the HTTP layer formats modTime as RFC 3339. */
export interface Entry {
  /** Last segment of path. */
  name: string;
  /** Whole path from the location root, no leading or trailing "/". */
  path: string;
  /** Bytes for objects, 0 for folders, -1 for buckets and containers. */
  size: number;
  isDir: boolean;
  mimeType?: string;
  modTime?: Date;
  /**
   * The provider's tag for this version of the object's content (S3's ETag, as given), when the
   * listing reports one. Not part of the API's entry: the planner keeps it so a server-side copy can
   * be pinned to the version that was listed and confirmed from the provider's answer.
   */
  etag?: string;
  /**
   * Hashes of the content the listing itself reports, lower-case hex (s3: the MD5 a single-part ETag
   * is; azureblob: Content-MD5; gcs: md5Hash and crc32c), so a sync can compare by checksum without a
   * stat per object (docs/api.md, "Sync"). Absent where the listing gives none.
   */
  hashes?: Partial<Record<HashKind, string>>;
}

export interface ObjectInfo {
  path: string;
  size: number;
  modTime?: Date;
  mimeType?: string;
  /** Hashes the provider reports for the object, lower-case hex (dropbox: content_hash as given). */
  hashes: Partial<Record<HashKind, string>>;
  /** The provider's tag for this version of the content, when known (see Entry.etag). */
  etag?: string;
  /**
   * Set only by a write (write(), ResumableWrites.write()): the hash kinds the store compared, during
   * this write, between what it computed over the bytes it sent and what the provider says it stored
   * (DECISIONS, "Every byte proven"). A mismatch never returns: the write fails as transient. A
   * server-side copy (features.copy) sets it when the provider reported the same hash for the copy as
   * for the source version the copy was pinned to.
   * Absent or empty when the provider reports no hash the store could compare.
   */
  verified?: HashKind[];
}

export interface ListOptions {
  /** Descend into sub-folders. A recursive listing yields the folders too. */
  recursive?: boolean;
  signal?: AbortSignal;
}

export interface ReadOptions {
  /** Byte range: offset, and length (to the end when omitted). */
  range?: { offset: number; length?: number };
  /**
   * Read only this version of the object (the etag its stat or listing reported): a changed object
   * fails with transient instead of giving bytes of another version. Stores whose provider has no
   * conditional read ignore it.
   */
  ifMatch?: string;
  signal?: AbortSignal;
}

export interface WriteOptions {
  /** Byte count of the body when known; the store verifies it and fails on a mismatch. */
  size?: number;
  mimeType?: string;
  signal?: AbortSignal;
  /**
   * What else ends a wait for room in the transfer memory budget, besides `signal`: an upload through
   * HTTP gives its idle deadline and the server's closing (src/domain/files.ts). A store that
   * takes no part of the budget ignores it.
   */
  memoryWait?: MemoryWait;
  /** Called with the cumulative bytes accepted by the provider, for progress reporting. */
  onProgress?: (bytesDone: number) => void;
  /**
   * Hashes of the whole body (lower-case hex) that the body itself checks before it ends: a streamed
   * copy's ByteCounter (src/objects/verify.ts) fails the stream before its end when the bytes read
   * hash otherwise. Once the body has ended without an error, its bytes have these hashes, so a store
   * may send them as its own (Content-MD5, a blob's MD5) instead of hashing the same bytes again; it
   * must not rely on them before the end.
   */
  bodyHashes?: Partial<Record<HashKind, string>>;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CopyOptions extends CallOptions {
  /**
   * What the caller knows of the source (its size, and hashes when it has them), so the store need
   * not ask the provider first. The store may rely on it only as far as the provider's answer to the
   * copy confirms it.
   */
  source?: ObjectInfo;
}

export interface UploadLimits {
  /** Smallest part of a multipart or chunked upload (the last part may be smaller). */
  minPartSize: number;
  maxPartSize: number;
  maxParts: number;
  /** Above this size a single request is not allowed and the chunked path is taken. */
  singleRequestMax: number;
}

/** A part of a resumable upload that the provider has acknowledged. */
export interface UploadedPart {
  /** 0-based position in the object; the part holds bytes [index x partSize, + size). */
  index: number;
  /** What the provider needs to assemble the object from the part: S3's ETag, Azure's block id. */
  tag: string;
  size: number;
}

/** An upload begun by ResumableWrites.begin(); plain data, so it can be recorded and read back. */
export interface ResumableUpload {
  /** The provider's name for the upload (S3's UploadId; on Azure, ferry's prefix of the block ids). */
  uploadId: string;
  /** Every part but the last has this size, in every attempt at the upload. */
  partSize: number;
}

export interface ResumableWriteOptions extends WriteOptions {
  /** The whole object's size (the body holds only what the done parts do not). */
  size: number;
  upload: ResumableUpload;
  /** Parts already at the provider: a run from index 0, as check() confirmed. The body starts after them. */
  done: readonly UploadedPart[];
  /**
   * Parts after the first missing one that the provider still holds (check() confirmed them): their
   * bytes are still in the body, but they are not sent again.
   */
  kept?: readonly UploadedPart[];
  /** Called as each new part is acknowledged; the upload does not complete before every call settled. */
  onPart: (part: UploadedPart) => Promise<void>;
  /**
   * The bytes the done parts hold, read again from the source, for a store that stores a hash of the
   * whole object it computes itself (azureblob's Content-MD5). Called at most once.
   */
  prefix?: () => Promise<Readable>;
}

/**
 * Uploads that survive the process writing them: a part acknowledged by the provider stays there
 * until the upload is completed or aborted, so another process can continue from the first missing
 * part (docs/engine.md, "Resumption"). write() is the same upload with nothing done yet.
 */
export interface ResumableWrites {
  /** Starts an upload of `size` bytes to `path`. */
  begin(
    path: string,
    options: { size: number; mimeType?: string; signal?: AbortSignal },
  ): Promise<ResumableUpload>;
  /**
   * Of `parts`, those the provider still holds for the upload (same tag and size), with any other parts
   * of the upload it holds that were not recorded, where the store can tell (azureblob: the block ids
   * are the upload's own); undefined when it no longer knows the upload (completed, aborted, or expired).
   */
  check(
    path: string,
    upload: ResumableUpload,
    parts: readonly UploadedPart[],
    options?: CallOptions,
  ): Promise<UploadedPart[] | undefined>;
  /** Uploads the body as the parts after `done`, completes the upload, and reports what was stored. */
  write(path: string, body: Readable, options: ResumableWriteOptions): Promise<ObjectInfo>;
  /** Drops the upload and its parts; not knowing the upload any more is not an error. */
  abort(path: string, upload: ResumableUpload, options?: CallOptions): Promise<void>;
}

/**
 * Buckets (containers on azureblob) made on request (docs/api.md, "Buckets"). Bucket stores declare
 * it; folder stores have none, since a folder comes into being when something is written into it.
 */
export interface BucketCreation {
  /**
   * The provider's naming rules, checked without any request: throws invalid with a message that names
   * the rule the name breaks.
   */
  checkName(name: string): void;
  /**
   * Creates the bucket and answers its listing entry (size -1). Checks the name first. conflict when the
   * bucket exists, with a message saying whose it is when the provider tells (yours, or another
   * account's: bucket names are global on most providers).
   */
  create(name: string, options?: CallOptions): Promise<Entry>;
}

/** Optional capabilities. A store declares what it has; absent means "not supported". */
export interface StoreFeatures {
  /** An empty path lists buckets or containers (entries with size -1). */
  readonly bucketListing: boolean;
  /** Hash kinds stat() reports. */
  readonly hashes: readonly HashKind[];
  readonly upload: UploadLimits;
  /** Server-side copy within this store's account; `from` may be a path of any store with the same account. */
  readonly copy?: (from: string, to: string, options?: CopyOptions) => Promise<ObjectInfo>;
  /** Server-side move (rename) within this store's account. */
  readonly move?: (from: string, to: string, options?: CallOptions) => Promise<ObjectInfo>;
  /** Multipart uploads that another process can continue after a crash. */
  readonly resumable?: ResumableWrites;
  /** Creating buckets (containers). */
  readonly createBucket?: BucketCreation;
}

export interface Store {
  readonly provider: Provider;
  readonly account: string;
  readonly features: StoreFeatures;

  /**
   * The entries under a folder, bucket, or (path "" on a bucket store) the buckets. Throws not_found
   * (from the first iteration) when the folder or bucket does not exist.
   */
  list(path: string, options?: ListOptions): AsyncIterable<Entry>;
  /** One object's metadata; not_found when it does not exist (folders are not objects). */
  stat(path: string, options?: CallOptions): Promise<ObjectInfo>;
  /** An object's bytes as a stream; not_found is thrown before the stream is returned. */
  read(path: string, options?: ReadOptions): Promise<Readable>;
  /** Writes (replaces) an object from a stream, with bounded memory. */
  write(path: string, body: Readable, options?: WriteOptions): Promise<ObjectInfo>;
  /** Deletes one object; not_found when it does not exist. */
  delete(path: string, options?: CallOptions): Promise<void>;
  /** Releases sockets and timers. */
  close(): Promise<void>;
}
