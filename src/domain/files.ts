// Files through ferry (docs/api.md, "Files through ferry"): PUT, GET and HEAD /v1/files/<location>/<path>.
// This module owns what can be decided before a byte moves: which location the URL names (a label or an
// id), whether the path names one file (exact bytes, never a pattern), whether the location takes
// uploads now, and whether a body of the declared size fits what its store can hold. The HTTP route
// streams the bytes.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, LocationRow } from '../db/schema.js';
import { FerryError, invalid, isFerryError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { bucketWord, hasBuckets } from '../providers.js';
import type { ObjectInfo, Store, UploadLimits } from '../stores/contract.js';
import { type AuditContext, record } from './audit/audit.js';
import type { Caller } from './caller.js';
import type { Locations } from './locations/locations.js';
import type { Storage } from './storage.js';
import { checkUsable } from './transfers/copy.js';

/**
 * The largest upload a store's limits allow: of a known size, its largest part as many times as it may
 * have parts; of unknown size (no Content-Length), its smallest part as many times, since a store must
 * choose its part size before it knows how much comes (docs/api.md, "Files through ferry").
 */
export function largestUpload(limits: UploadLimits, sizeKnown: boolean): number {
  const part = sizeKnown ? limits.maxPartSize : limits.minPartSize;
  return Math.min(Number.MAX_SAFE_INTEGER, part * limits.maxParts);
}

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

export interface OpenFile {
  row: LocationRow;
  store: Store;
  path: string;
}

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
  async locate(caller: Caller, location: string): Promise<LocationRow> {
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
   * The file to read, with what its store says of it. A bucket, or a folder (a name with entries
   * under it and no object of its own), is 400 with a message that says so, not a 404.
   */
  async openForRead(
    caller: Caller,
    location: string,
    rawPath: string,
  ): Promise<OpenFile & { info: ObjectInfo }> {
    const row = await this.locate(caller, location);
    const path = filePath(rawPath, row);
    const store = this.storage.open(row);
    try {
      let info: ObjectInfo;
      try {
        info = await store.stat(path);
      } catch (err) {
        if (isFerryError(err, 'not_found') && (await isFolder(store, path))) {
          throw invalid(
            `"${path}" is a folder on location ${row.label}, not a file; list it with POST /v1/list`,
          );
        }
        if (isFerryError(err, 'not_found')) throw notFound(`no file "${path}" on location ${row.label}`, err);
        throw err;
      }
      return { row, store, path, info };
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  /**
   * Where an upload goes, checked before a byte of it is read: the path, the location's state (as for
   * a copy), and the declared size against the store's limit (413). `limit` is what a body of unknown
   * size may not pass.
   */
  async openForWrite(
    caller: Caller,
    location: string,
    rawPath: string,
    size: number | undefined,
    audit: AuditContext,
  ): Promise<OpenFile & { limit: number; stored: () => Promise<void> }> {
    const row = await this.locate(caller, location);
    const path = filePath(rawPath, row);
    checkUsable(row, this.clock.now(), 'uploads');
    const store = this.storage.open(row);
    const limit = largestUpload(store.features.upload, size !== undefined);
    if (size !== undefined && size > limit) {
      await store.close();
      throw tooLarge(size, limit, row);
    }
    // The upload is committed when the store's write completes; then it is recorded (file.upload, the
    // 201 the route answers). The write is the store's, not the database's: the record is a transaction
    // with nothing else in it, since nothing else is written here.
    const stored = () =>
      this.db
        .transaction()
        .execute((trx) =>
          record(
            trx,
            audit,
            { action: 'file.upload', target: `${row.label}/${path}`, status: 201 },
            this.clock.now(),
          ),
        );
    return { row, store, path, limit, stored };
  }
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
