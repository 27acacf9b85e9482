// The OneDrive store: Microsoft Graph's driveItem API with the location's OAuth access token. Items
// are addressed by path (client.ts); uploads are simple or upload sessions (upload.ts); copy is
// asynchronous (POST …/copy, then the monitor URL is polled) and move is a PATCH of parentReference
// and name. Metadata `drive_id` selects another drive than the user's own (/drives/{id}).
//
// Quirks worth knowing
// - Names are case-insensitive (case-preserving), and OneDrive refuses " * : < > ? / \ | and leading
//   or trailing spaces in names: such writes answer invalid.
// - A file and a folder cannot share a name in one folder.
// - Hashes: quickXorHash on every drive (reported as lower-case hex of its 20 bytes); sha1 only where
//   Graph still reports it (OneDrive Personal).
// - Copy and move replace the destination with @microsoft.graph.conflictBehavior=replace; OneDrive
//   Personal does not honour it for copy, which then fails with nameAlreadyExists (conflict).
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError, notFound } from '../../errors.js';
import type { OAuthProvider } from '../../providers.js';
import type { StoreContext, StoreLocation } from '../context.js';
import type {
  CallOptions,
  Entry,
  ListOptions,
  ObjectInfo,
  ReadOptions,
  Store,
  StoreFeatures,
  WriteOptions,
} from '../contract.js';
import { OAuthHttp, oauthAccess } from '../shared/http.js';
import { joinPath, parentAndName, splitPath } from '../shared/paths.js';
import { SentHashes } from '../shared/proof.js';
import { parseTime } from '../shared/times.js';
import { type DriveItem, GraphApi, isFolderItem } from './client.js';
import { declarations } from './declaration.js';
import { readGraphError, readJobFailure } from './errors.js';
import { FRAGMENT_GRANULE, FRAGMENT_MAX, SIMPLE_UPLOAD_MAX, uploadFile } from './upload.js';

const PROVIDER: OAuthProvider = 'onedrive';
/** rclone's default OneDrive chunk: 10 MiB (32 x 320 KiB). */
const DEFAULT_CHUNK_SIZE = 10 * 1024 * 1024;
/** How long a server-side copy may take before the store gives up waiting (transient). */
const COPY_TIMEOUT_MS = 10 * 60 * 1000;

/** Knobs the tests turn; production uses the defaults. */
export interface OneDriveTuning {
  /** Upload session fragment size, a multiple of 320 KiB up to 60 MiB (default 10 MiB). */
  chunkSize: number;
  /** First and longest wait between polls of a copy's monitor URL, in ms. */
  copyPollMs: number;
  copyPollMaxMs: number;
}

export function open(
  location: StoreLocation,
  ctx: StoreContext,
  tuning: Partial<OneDriveTuning> = {},
): Store {
  return new OneDriveStore(location, ctx, tuning);
}

function toEntry(item: DriveItem, path: string): Entry {
  const folder = isFolderItem(item);
  const entry: Entry = { name: item.name, path, size: folder ? 0 : (item.size ?? 0), isDir: folder };
  if (!folder && item.file?.mimeType) entry.mimeType = item.file.mimeType;
  const modTime = parseTime(item.lastModifiedDateTime);
  if (modTime) entry.modTime = modTime;
  return entry;
}

function toInfo(item: DriveItem, path: string): ObjectInfo {
  const hashes: ObjectInfo['hashes'] = {};
  const quickXor = item.file?.hashes?.quickXorHash;
  if (quickXor) hashes.quickxor = Buffer.from(quickXor, 'base64').toString('hex');
  const sha1 = item.file?.hashes?.sha1Hash;
  if (sha1) hashes.sha1 = sha1.toLowerCase();
  const sha256 = item.file?.hashes?.sha256Hash;
  if (sha256) hashes.sha256 = sha256.toLowerCase();
  const info: ObjectInfo = { path, size: item.size ?? 0, hashes };
  if (item.file?.mimeType) info.mimeType = item.file.mimeType;
  const modTime = parseTime(item.lastModifiedDateTime);
  if (modTime) info.modTime = modTime;
  return info;
}

class OneDriveStore implements Store {
  readonly provider = PROVIDER;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #http: OAuthHttp;
  readonly #api: GraphApi;
  readonly #tuning: OneDriveTuning;
  #closing: Promise<void> | undefined;

  constructor(location: StoreLocation, ctx: StoreContext, tuning: Partial<OneDriveTuning>) {
    const apiUrl = ctx.oauthApps.onedrive.apiUrl;
    this.#tuning = { chunkSize: DEFAULT_CHUNK_SIZE, copyPollMs: 250, copyPollMaxMs: 2000, ...tuning };
    const { chunkSize } = this.#tuning;
    if (chunkSize <= 0 || chunkSize % FRAGMENT_GRANULE !== 0 || chunkSize > FRAGMENT_MAX) {
      throw new FerryError('invalid', 'onedrive: the chunk size must be a multiple of 320 KiB up to 60 MiB');
    }
    const driveId = typeof location.metadata.drive_id === 'string' ? location.metadata.drive_id : undefined;
    // Server-side copy and move need both paths in one drive; only this location is known to be.
    this.account = `onedrive:${apiUrl}#${location.id}`;
    this.#http = new OAuthHttp({
      provider: PROVIDER,
      ...oauthAccess(location, ctx),
      readError: readGraphError,
      origins: [apiUrl],
    });
    this.#api = new GraphApi(this.#http, apiUrl, driveId);
    this.features = {
      bucketListing: declarations.onedrive.features.bucketListing,
      hashes: declarations.onedrive.hashes,
      upload: {
        minPartSize: FRAGMENT_GRANULE,
        maxPartSize: FRAGMENT_MAX,
        maxParts: Number.MAX_SAFE_INTEGER,
        singleRequestMax: SIMPLE_UPLOAD_MAX,
      },
      copy: (from, to, opts) => this.#copy(from, to, opts),
      move: (from, to, opts) => this.#move(from, to, opts),
    };
  }

  async *list(path: string, options: ListOptions = {}): AsyncIterable<Entry> {
    const { signal } = options;
    splitPath(path); // rejects malformed paths before any call
    // Depth first; the first folder is read by path (404 when missing), the ones below by id.
    const stack: Array<{ path: string; id?: string }> = [{ path }];
    for (let dir = stack.pop(); dir; dir = stack.pop()) {
      for await (const page of this.#api.children(dir, signal)) {
        for (const item of page) {
          const entryPath = joinPath(dir.path, item.name);
          yield toEntry(item, entryPath);
          if (options.recursive && isFolderItem(item)) stack.push({ path: entryPath, id: item.id });
        }
      }
    }
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    return toInfo(await this.#file(path, options.signal), path);
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    parentAndName(path);
    const range = options.range;
    if (range?.length === 0) {
      await this.#file(path, options.signal); // not_found still answers first
      return Readable.from([]);
    }
    let header: string | undefined;
    if (range && (range.offset > 0 || range.length !== undefined)) {
      header = `bytes=${range.offset}-${range.length === undefined ? '' : range.offset + range.length - 1}`;
    }
    return this.#api.download(path, header, options.signal);
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    try {
      parentAndName(path);
    } catch (err) {
      body.destroy();
      throw err;
    }
    // quickXorHash is the one hash every drive reports (sha1Hash only on personal ones). A mismatch
    // leaves the item as it is: Graph replaced what was there (keeping it as a version), and the retry
    // replaces it again.
    const sent = new SentHashes('onedrive', ['quickxor']);
    try {
      const chunkSize = this.#tuning.chunkSize;
      const item = await uploadFile(this.#api, path, body, { chunkSize }, options, sent);
      const info = toInfo(item, path);
      if (options.size !== undefined && info.size !== options.size) {
        throw new FerryError(
          'transient',
          `onedrive: ${path}: stored ${info.size} bytes, sent ${options.size}`,
        );
      }
      info.verified = await sent.check(path, info.hashes);
      return info;
    } finally {
      sent.discard();
    }
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    // By id after a look: a DELETE by path would take a whole folder with it.
    const item = await this.#file(path, options.signal);
    await this.#api.deleteById(item.id, options.signal, `delete ${path}`);
  }

  /** Idempotent: a second close() resolves like the first. */
  close(): Promise<void> {
    this.#closing ??= this.#http.close();
    return this.#closing;
  }

  async #copy(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    if (from === to) throw new FerryError('invalid', `onedrive: cannot copy "${from}" onto itself`);
    const { signal } = options;
    const source = await this.#file(from, signal);
    const parent = await this.#folderFor(to, signal);
    const { name } = parentAndName(to);
    const operation = `copy ${from} -> ${to}`;
    const ref: { id: string; driveId?: string } = { id: parent.id };
    if (parent.parentReference?.driveId) ref.driveId = parent.parentReference.driveId;
    const monitor = await this.#api.startCopy(source.id, ref, name, signal, operation);
    const deadline = Date.now() + COPY_TIMEOUT_MS;
    let wait = this.#tuning.copyPollMs;
    for (;;) {
      const { status, body } = await this.#api.pollMonitor(monitor, signal, operation);
      const job = (body ?? {}) as { status?: unknown; resourceId?: unknown };
      if (status === 303 || job.status === 'completed') {
        const item =
          typeof job.resourceId === 'string'
            ? await this.#api.getById(job.resourceId, signal, operation)
            : await this.#api.getByPath(to, signal);
        return toInfo(item, to);
      }
      if (job.status === 'failed' || job.status === 'deleteFailed' || job.status === 'cancelled') {
        throw readJobFailure(body, operation);
      }
      if (Date.now() + wait > deadline) {
        throw new FerryError(
          'transient',
          `onedrive: ${operation}: still running after ${COPY_TIMEOUT_MS / 1000} s`,
        );
      }
      await sleep(wait, undefined, signal ? { signal } : {});
      wait = Math.min(wait * 2, this.#tuning.copyPollMaxMs);
    }
  }

  async #move(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    if (from === to) return this.stat(from, options);
    const { signal } = options;
    const source = await this.#file(from, signal);
    const parent = await this.#folderFor(to, signal);
    const { name } = parentAndName(to);
    const moved = await this.#api.move(source.id, parent.id, name, signal, `move ${from} -> ${to}`);
    return toInfo(moved, to);
  }

  /** The folder that will hold `path`, made (with its missing parents) when absent. */
  async #folderFor(path: string, signal: AbortSignal | undefined): Promise<DriveItem> {
    const parentPath = parentAndName(path).parent;
    let folder: DriveItem | undefined;
    try {
      folder = await this.#api.getByPath(parentPath, signal);
    } catch (err) {
      if (!(err instanceof FerryError && err.kind === 'not_found')) throw err;
      const segments = splitPath(parentPath);
      for (let i = 0; i < segments.length; i++) {
        const at = segments.slice(0, i + 1).join('/');
        try {
          folder = await this.#api.createFolder(
            segments.slice(0, i).join('/'),
            segments[i] as string,
            signal,
          );
        } catch (createErr) {
          // nameAlreadyExists: that one is there; look it up and go on.
          if (!(createErr instanceof FerryError && createErr.kind === 'conflict')) throw createErr;
          folder = await this.#api.getByPath(at, signal);
        }
      }
    }
    if (!folder || !isFolderItem(folder)) {
      throw new FerryError('invalid', `onedrive: "${parentPath}" is a file, not a folder`);
    }
    return folder;
  }

  /** The file at `path`; not_found when it is missing or is a folder (folders are not objects). */
  async #file(path: string, signal: AbortSignal | undefined): Promise<DriveItem> {
    parentAndName(path);
    const item = await this.#api.getByPath(path, signal);
    if (isFolderItem(item)) throw notFound(`onedrive: "${path}" is a folder, not an object`);
    return item;
  }
}
