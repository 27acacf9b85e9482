// Files through ferry (docs/api.md, "Files through ferry"): PUT, GET and HEAD /v1/files/<location>/<path>.
// This module owns an upload and a download from the location the URL names to the store closed again,
// as tus-node-server's writeToStore does: which location the URL names (a label or an id), whether the
// path names one file (exact bytes, never a pattern), whether the location takes uploads now, whether a
// body of the declared size fits what its store can hold, the body's limits on its way (its size, its
// pace, the workspace's bandwidth cap: src/domain/file-bytes.ts), the store's write under the transfer
// memory budget, the record of what was stored, and giving back on every way out what was taken (the
// store, its parts' room in the budget, the body's timer). The HTTP route parses the request, hands
// the body and the limits here, and answers what comes back.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, LocationRow } from '../db/schema.js';
import { invalid, isFerryError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { type Throttle, throttled } from '../objects/throttle.js';
import { bucketWord, hasBuckets } from '../providers.js';
import type { ObjectInfo, ReadOptions, Store } from '../stores/contract.js';
import { type AuditContext, record } from './audit/audit.js';
import type { Caller } from './caller.js';
import { counted, largestUpload, tooLarge, UploadBody } from './file-bytes.js';
import type { Locations } from './locations/locations.js';
import { checkUsable } from './locations/usable.js';
import type { Storage } from './storage.js';

/**
 * The path as the store takes it, checked: a path is exact bytes (no pattern, no escape), so only what
 * cannot name one file is refused: an empty path, a leading or trailing "/" (a folder), a "." or ".."
 * segment, and on a bucket store a bucket alone. NUL and lone surrogates are refused with every
 * request's input (src/http/input.ts, and the route's own check of the URL).
 */
export function filePath(path: string, row: LocationRow): string {
  if (path === '') throw invalid('the URL names no file: send /v1/files/<location>/<path>');
  if (path.includes('\u0000')) throw invalid('the path must not contain U+0000 (NUL)');
  if (path.startsWith('/')) throw invalid(`the path "${path}" must not start with "/"`);
  for (const segment of path.split('/')) {
    if (segment === '.' || segment === '..')
      throw invalid(`the path "${path}" must not contain a "${segment}" segment`);
  }
  if (path.endsWith('/'))
    throw invalid(`the path "${path}" names a folder (it ends with "/"); name a file in it`);
  if (hasBuckets(row.provider) && !path.includes('/')) {
    const word = bucketWord(row.provider);
    throw invalid(
      `the path "${path}" names a ${word}, not a file: send <${word}>/<name> (location ${row.label} is ${row.provider})`,
    );
  }
  return path;
}

/** A file a URL names: the location as the URL gives it (a label or an id), and the path in it. */
export interface FileTarget {
  location: string;
  path: string;
}

/** An upload as the caller sent it. */
export interface Upload extends FileTarget {
  /** The declared size (Content-Length); undefined for a body of unknown size (chunked). */
  size: number | undefined;
  /** Stored with the file; without it the store's default. */
  mimeType: string | undefined;
  /** The body, unread: nothing of it is read before the upload is known to be taken. */
  body: Readable;
  audit: AuditContext;
}

/** What an upload is held to besides its store's limit, and what ends it early. */
export interface UploadOptions {
  /**
   * No byte for this long while ferry waits for one is a stall (408); a wait for room in the transfer
   * memory ends after as long (503).
   */
  idleMs: number;
  /** The workspace's bandwidth cap (docs/api.md, "Bandwidth"), if any. */
  throttle: Throttle | undefined;
  /** Told each chunk of the body as it passes (the metrics). */
  onBytes: (bytes: number) => void;
  /** Aborted when the caller goes away or its key ends: the write is aborted with its reason. */
  signal: AbortSignal;
  /** Aborted when the server begins to close: it ends a wait for room in the transfer memory. */
  closing: AbortSignal;
  /** Where a stopped upload is said, with its reason: its answer may have nowhere to go. */
  log: { info(details: object, message: string): void };
}

/** A download: which bytes go out once the file's headers are known, and what they are held to. */
export interface DownloadOptions {
  /** The workspace's bandwidth cap, if any. */
  throttle: Throttle | undefined;
  /** Told each chunk as it leaves (the metrics). */
  onBytes: (bytes: number) => void;
  /** Aborted when the answer ends early (the client gone, the key ended): the read stops. */
  signal: AbortSignal;
}

/** The file found, as its store describes it. */
export interface FoundFile {
  path: string;
  info: ObjectInfo;
}

/**
 * Which bytes of the file to send, decided from what its store says of it: a read (the whole file, or
 * a range), or undefined when no byte goes out (HEAD, a range past the end).
 */
export type ChooseBytes = (file: FoundFile) => Pick<ReadOptions, 'range'> | undefined;

export class Files {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly locations: Locations,
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /**
   * The location a URL segment names: a UUID is tried as an id first, and as a label when no location
   * has that id; anything else is a label (docs/api.md, "Files through ferry").
   */
  private async locate(caller: Caller, location: string): Promise<LocationRow> {
    if (location === '') throw invalid('the URL names no location: send /v1/files/<location>/<path>');
    if (isUuid(location)) {
      try {
        return await this.locations.resolve(caller, { id: location.toLowerCase() });
      } catch (err) {
        if (!isFerryError(err, 'not_found')) throw err;
      }
    }
    return this.locations.resolve(caller, { name: location });
  }

  /**
   * Stores the body at the path and records it (file.upload); says what the store now holds. Checked
   * before a byte of the body is read: the path, the location's state (as for a copy), and the
   * declared size against the store's limit (413). On its way the body is held to that limit (a body
   * of unknown size is cut off once it passes it), to its pace and to the bandwidth cap. Whatever
   * stops it (an error, the limit, a stall, `signal`) aborts the store's write, which gives back its
   * parts' room in the transfer memory; the store is closed however it ends.
   */
  async upload(caller: Caller, upload: Upload, options: UploadOptions): Promise<FoundFile> {
    const row = await this.locate(caller, upload.location);
    const path = filePath(upload.path, row);
    checkUsable(row, this.clock.now(), 'uploads');
    options.signal.throwIfAborted();
    const store = this.storage.open(row);
    try {
      const limit = largestUpload(store.features.upload, upload.size !== undefined);
      if (upload.size !== undefined && upload.size > limit) throw tooLarge(upload.size, limit, row);
      const info = await writeBody(store, path, upload, options, limit, () =>
        tooLarge(undefined, limit, row),
      );
      // The upload is committed when the store's write completes; then it is recorded. The write is the
      // store's, not the database's: the record is a transaction with nothing else in it.
      await this.db
        .transaction()
        .execute((trx) =>
          record(
            trx,
            upload.audit,
            { action: 'file.upload', target: `${row.label}/${path}`, status: 201 },
            this.clock.now(),
          ),
        );
      return { path, info };
    } finally {
      await store.close();
    }
  }

  /**
   * The bytes of a file `choose` asks for, counted and under the bandwidth cap, or undefined when it
   * asks for none. A bucket, or a folder (a name with entries under it and no object of its own), is
   * 400 with a message that says so, not a 404. The store is closed when the bytes have gone out, when
   * the stream is destroyed (the answer ended early, `signal`), or at once when no byte goes out.
   */
  async download(
    caller: Caller,
    target: FileTarget,
    choose: ChooseBytes,
    options: DownloadOptions,
  ): Promise<Readable | undefined> {
    const row = await this.locate(caller, target.location);
    const path = filePath(target.path, row);
    const store = this.storage.open(row);
    const closeStore = () => void store.close().catch(() => {});
    let source: Readable;
    try {
      const info = await statFile(store, path, row);
      const wanted = choose({ path, info });
      if (wanted === undefined) {
        closeStore();
        return undefined;
      }
      source = await store.read(path, {
        ...wanted,
        ...(info.etag === undefined ? {} : { ifMatch: info.etag }),
      });
    } catch (err) {
      closeStore();
      throw err;
    }
    const out = throttled(counted(source, options.onBytes), options.throttle);
    const stop = () => out.destroy();
    options.signal.addEventListener('abort', stop, { once: true });
    out.once('close', () => {
      options.signal.removeEventListener('abort', stop);
      closeStore();
    });
    if (options.signal.aborted) stop();
    return out;
  }
}

/**
 * The body through its UploadBody and the bandwidth cap into the store's write. The first reason it
 * stopped for is the one thrown: the write's own error is often only its echo (an aborted read).
 */
async function writeBody(
  store: Store,
  path: string,
  upload: Upload,
  options: UploadOptions,
  limit: number,
  overLimit: () => Error,
): Promise<ObjectInfo> {
  const controller = new AbortController();
  let failure: unknown;
  const body = new UploadBody(limit, options.idleMs, options.onBytes, overLimit);
  const fail = (err: unknown) => {
    failure ??= err;
    controller.abort(err);
    body.destroy(err as Error);
  };
  body.once('error', (err) => {
    failure ??= err;
    controller.abort(err);
  });
  const stopped = () => fail(options.signal.reason);
  options.signal.addEventListener('abort', stopped, { once: true });
  if (options.signal.aborted) stopped();
  upload.body.pipe(body);
  try {
    // The cap waits after the idle watch: a wait for the cap is not a client gone quiet.
    const capped = throttled(body, options.throttle, controller.signal);
    return await store.write(path, capped, {
      ...(upload.size === undefined ? {} : { size: upload.size }),
      ...(upload.mimeType === undefined ? {} : { mimeType: upload.mimeType }),
      signal: controller.signal,
      memoryWait: { timeoutMs: options.idleMs, signal: options.closing },
    });
  } catch (err) {
    const reason = failure ?? err;
    options.log.info(
      { reason: reason instanceof Error ? reason.message : String(reason) },
      'upload stopped before it was stored',
    );
    throw reason;
  } finally {
    options.signal.removeEventListener('abort', stopped);
    upload.body.unpipe(body);
    body.destroy();
  }
}

/** What the store says of the file at `path`; a folder or a missing file said as such. */
async function statFile(store: Store, path: string, row: LocationRow): Promise<ObjectInfo> {
  try {
    return await store.stat(path);
  } catch (err) {
    if (isFerryError(err, 'not_found') && (await isFolder(store, path))) {
      throw invalid(`"${path}" is a folder on location ${row.label}, not a file; list it with POST /v1/list`);
    }
    if (isFerryError(err, 'not_found')) throw notFound(`no file "${path}" on location ${row.label}`, err);
    throw err;
  }
}

/** Whether `path` is a folder: something is listed under it. One page at most is read. */
async function isFolder(store: Store, path: string): Promise<boolean> {
  try {
    for await (const _entry of store.list(path)) return true;
    return false;
  } catch (err) {
    if (isFerryError(err, 'not_found') || isFerryError(err, 'invalid')) return false;
    throw err;
  }
}
