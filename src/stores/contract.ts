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

export type HashKind = 'md5' | 'sha1' | 'sha256' | 'crc32c' | 'dropbox' | 'quickxor';

/** One listing entry (SPEC 2.5); the HTTP layer formats modTime as RFC 3339. */
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
}

export interface ListOptions {
  /** Descend into sub-folders. A recursive listing yields the folders too. */
  recursive?: boolean;
  signal?: AbortSignal;
}

export interface ReadOptions {
  /** Byte range: offset, and length (to the end when omitted). */
  range?: { offset: number; length?: number };
  signal?: AbortSignal;
}

export interface WriteOptions {
  /** Byte count of the body when known; the store verifies it and fails on a mismatch. */
  size?: number;
  mimeType?: string;
  signal?: AbortSignal;
  /** Called with the cumulative bytes accepted by the provider, for progress reporting. */
  onProgress?: (bytesDone: number) => void;
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
