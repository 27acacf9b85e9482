// The Google Drive store: Drive API v3 over HTTP with the location's OAuth access token. Paths are
// walked from the root one name at a time (resolve.ts); uploads are multipart or resumable
// (upload.ts); copy and move are server-side (files.copy, files.update with addParents/removeParents).
//
// Quirks worth knowing
// - Drive allows several files of one name in a folder. write() replaces the content of the file that
//   is there (the newest, if there are several) instead of adding another; copy and move remove what
//   the destination name held before, once the new file is in place.
// - Google-native documents (Docs, Sheets, Slides…) are listed (size 0, their Google mimeType) but have
//   no binary content: read() answers unsupported, stat() reports size 0 and no hashes.
// - A file and a folder of the same name can live side by side (Drive keeps them apart).
// - delete() removes for good (files.delete), it does not move to the trash.
import { Readable } from 'node:stream';
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
import { joinPath, parentAndName } from '../shared/paths.js';
import { SentHashes } from '../shared/proof.js';
import { parseTime } from '../shared/times.js';
import { DriveApi, type DriveFile, isFolder, isGoogleNative } from './client.js';
import { declarations } from './declaration.js';
import { readDriveError } from './errors.js';
import { DriveResolver, newest, type ResolvedFile } from './resolve.js';
import { CHUNK_GRANULE, SINGLE_REQUEST_MAX, uploadFile } from './upload.js';

const PROVIDER: OAuthProvider = 'drive';
/** rclone's default Drive chunk: 8 MiB, sent one at a time. */
const DEFAULT_CHUNK_SIZE = 8 * 1024 * 1024;

/** Knobs the tests turn; production uses the defaults. */
export interface DriveTuning {
  /** Resumable chunk size, a multiple of 256 KiB (default 8 MiB). */
  chunkSize: number;
}

export function open(location: StoreLocation, ctx: StoreContext, tuning: Partial<DriveTuning> = {}): Store {
  return new DriveStore(location, ctx, tuning);
}

function toEntry(file: DriveFile, path: string): Entry {
  const folder = isFolder(file);
  const entry: Entry = { name: file.name, path, size: folder ? 0 : Number(file.size ?? 0), isDir: folder };
  if (!folder) entry.mimeType = file.mimeType;
  const modTime = parseTime(file.modifiedTime);
  if (modTime) entry.modTime = modTime;
  return entry;
}

function toInfo(file: DriveFile, path: string): ObjectInfo {
  const hashes: ObjectInfo['hashes'] = {};
  if (file.md5Checksum) hashes.md5 = file.md5Checksum.toLowerCase();
  if (file.sha1Checksum) hashes.sha1 = file.sha1Checksum.toLowerCase();
  if (file.sha256Checksum) hashes.sha256 = file.sha256Checksum.toLowerCase();
  const info: ObjectInfo = { path, size: Number(file.size ?? 0), mimeType: file.mimeType, hashes };
  const modTime = parseTime(file.modifiedTime);
  if (modTime) info.modTime = modTime;
  return info;
}

class DriveStore implements Store {
  readonly provider = PROVIDER;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #http: OAuthHttp;
  readonly #api: DriveApi;
  readonly #resolver: DriveResolver;
  readonly #chunkSize: number;
  readonly #writing = new Map<string, Promise<unknown>>();
  #closing: Promise<void> | undefined;

  constructor(location: StoreLocation, ctx: StoreContext, options: Partial<DriveTuning>) {
    const apiUrl = ctx.oauthApps.drive.apiUrl;
    this.#chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (this.#chunkSize <= 0 || this.#chunkSize % CHUNK_GRANULE !== 0) {
      throw new FerryError('invalid', 'drive: the chunk size must be a positive multiple of 256 KiB');
    }
    // Server-side copy and move need both paths in one Drive; only this location is known to be.
    this.account = `drive:${apiUrl}#${location.id}`;
    this.#http = new OAuthHttp({
      provider: PROVIDER,
      ...oauthAccess(location, ctx),
      readError: readDriveError,
      origins: [apiUrl],
    });
    this.#api = new DriveApi(this.#http, apiUrl);
    this.#resolver = new DriveResolver(this.#api);
    this.features = {
      bucketListing: declarations.drive.features.bucketListing,
      hashes: declarations.drive.hashes,
      upload: {
        minPartSize: CHUNK_GRANULE,
        maxPartSize: 5 * 1024 ** 4,
        maxParts: Number.MAX_SAFE_INTEGER,
        singleRequestMax: SINGLE_REQUEST_MAX,
      },
      copy: (from, to, opts) => this.#copy(from, to, opts),
      move: (from, to, opts) => this.#move(from, to, opts),
    };
  }

  async *list(path: string, options: ListOptions = {}): AsyncIterable<Entry> {
    const { signal } = options;
    const root = await this.#resolver.findFolder(path, signal);
    if (root === undefined) throw notFound(`drive: folder "${path}" not found`);
    // Depth first; only folder ids wait on the stack, entries are yielded page by page.
    const stack = [{ id: root, path }];
    for (let dir = stack.pop(); dir; dir = stack.pop()) {
      const operation = `files.list ${dir.path === '' ? '/' : dir.path}`;
      for await (const page of this.#api.children(dir.id, { signal, operation })) {
        for (const file of page) {
          const entryPath = joinPath(dir.path, file.name);
          yield toEntry(file, entryPath);
          if (options.recursive && isFolder(file)) stack.push({ id: file.id, path: entryPath });
        }
      }
    }
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    const { file } = await this.#file(path, options.signal);
    return toInfo(file, path);
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    const { file } = await this.#file(path, options.signal);
    if (isGoogleNative(file)) {
      throw new FerryError(
        'unsupported',
        `drive: "${path}" is a Google ${file.mimeType.slice('application/vnd.google-apps.'.length)} document with no binary content to read`,
      );
    }
    const size = Number(file.size ?? 0);
    const offset = options.range?.offset ?? 0;
    const length = options.range?.length;
    const end = Math.min(size, length === undefined ? size : offset + length); // exclusive
    if (offset >= end) return Readable.from([]);
    const range = offset === 0 && end === size ? undefined : { start: offset, end: end - 1 };
    return this.#api.download(file.id, range, options.signal, `files.get alt=media ${path}`);
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    let target: { parent: string; name: string };
    try {
      target = parentAndName(path);
    } catch (err) {
      body.destroy();
      throw err;
    }
    // One write per path at a time in this store, so two writers never both create the name.
    return this.#serial(path, async () => {
      const { signal } = options;
      let started = false;
      // MD5 only: the one hash Drive has always reported (sha1 and sha256 came later), and each more
      // costs the hashing thread as much again.
      const sent = new SentHashes('drive', ['md5']);
      try {
        const parentId = await this.#resolver.ensureFolder(target.parent, signal);
        const { files } = await this.#resolver.filesNamed(
          parentId,
          target.name,
          signal,
          `files.list ${path}`,
        );
        const existing = newest(files);
        started = true;
        const file = await uploadFile(
          this.#api,
          { ...(existing ? { existingId: existing.id } : {}), parentId, name: target.name, path },
          body,
          { chunkSize: this.#chunkSize, singleRequestMax: SINGLE_REQUEST_MAX },
          options,
          sent,
        );
        const complete =
          file.size === undefined ? await this.#api.get(file.id, signal, `files.get ${path}`) : file;
        const info = toInfo(complete, path);
        if (options.size !== undefined && info.size !== options.size) {
          throw new FerryError(
            'transient',
            `drive: ${path}: stored ${info.size} bytes, sent ${options.size}`,
          );
        }
        try {
          info.verified = await sent.check(path, info.hashes);
        } catch (err) {
          // A file this write made holds bytes that are not the source's: it goes. A file that was
          // there keeps its id (and its sharing and history); the retry replaces its content again.
          if (!existing) {
            await this.#api.delete(file.id, signal, `files.delete ${path}`).catch(() => undefined);
          }
          throw err;
        }
        return info;
      } catch (err) {
        if (!started) body.destroy();
        this.#resolver.forget();
        throw err;
      } finally {
        sent.discard();
      }
    });
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    const { file } = await this.#file(path, options.signal);
    await this.#api.delete(file.id, options.signal, `files.delete ${path}`);
  }

  /** Idempotent: a second close() resolves like the first. */
  close(): Promise<void> {
    this.#closing ??= this.#http.close();
    return this.#closing;
  }

  async #copy(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    if (from === to) throw new FerryError('invalid', `drive: cannot copy "${from}" onto itself`);
    const { signal } = options;
    const source = await this.#file(from, signal);
    return this.#place(source, to, signal, (parentId, name) =>
      this.#api.copy(source.file.id, name, parentId, signal, `files.copy ${from} -> ${to}`),
    );
  }

  async #move(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    if (from === to) return this.stat(from, options);
    const { signal } = options;
    const source = await this.#file(from, signal);
    return this.#place(source, to, signal, (parentId, name) => {
      const change: { name: string; addParents?: string; removeParents?: string } = { name };
      if (parentId !== source.parentId) {
        change.addParents = parentId;
        change.removeParents = source.parentId;
      }
      return this.#api.update(source.file.id, change, signal, `files.update ${from} -> ${to}`);
    });
  }

  /**
   * Puts a copy or the moved source at `to`, one write at a time per name: the folder is made when
   * missing, and the files the name held before are deleted once the new one is in place, so the
   * destination name holds one file.
   */
  async #place(
    source: ResolvedFile,
    to: string,
    signal: AbortSignal | undefined,
    put: (parentId: string, name: string) => Promise<DriveFile>,
  ): Promise<ObjectInfo> {
    const target = parentAndName(to);
    return this.#serial(to, async () => {
      const parentId = await this.#resolver.ensureFolder(target.parent, signal);
      const before = await this.#resolver.filesNamed(parentId, target.name, signal, `files.list ${to}`);
      const placed = await put(parentId, target.name);
      for (const old of before.files) {
        if (old.id === placed.id || old.id === source.file.id) continue;
        await this.#api.delete(old.id, signal, `files.delete ${to} (replaced)`);
      }
      return toInfo(placed, to);
    });
  }

  async #file(path: string, signal: AbortSignal | undefined): Promise<ResolvedFile> {
    const found = await this.#resolver.findFile(path, signal);
    if (!found) throw notFound(`drive: "${path}" not found`);
    return found;
  }

  async #serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#writing.get(key);
    const run = (previous ?? Promise.resolve()).catch(() => undefined).then(work);
    this.#writing.set(key, run);
    try {
      return await run;
    } finally {
      if (this.#writing.get(key) === run) this.#writing.delete(key);
    }
  }
}
