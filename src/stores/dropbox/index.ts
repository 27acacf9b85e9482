// The Dropbox store: Dropbox API v2 over undici with the location's OAuth access token. Paths are
// Dropbox paths without their leading "/" (the root is "" for list_folder). Declares server-side copy
// and move (files/copy_v2, files/move_v2) and the 'dropbox' content hash.
import { Readable } from 'node:stream';
import { FerryError, isFerryError, notFound } from '../../errors.js';
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
import { oauthAccess } from '../shared/http.js';
import { parentAndName, splitPath } from '../shared/paths.js';
import { SentHashes } from '../shared/proof.js';
import { rangeHeader, sliceToRange } from '../shared/range.js';
import { DropboxClient, type FileMetadata, type Metadata } from './client.js';
import { declarations } from './declaration.js';
import { listDropbox } from './list.js';
import { uploadDropbox } from './upload.js';

export interface DropboxTuning {
  /** Upload session part size, and the largest object sent in a single files/upload request. */
  partSize: number;
  /** list_folder `limit` (Dropbox accepts 1..2000). */
  listLimit: number;
}

const MiB = 1024 * 1024;
/** Dropbox: one request carries at most 150 MB; a session builds files up to 350 GB. */
const MAX_REQUEST = 150 * MiB;
const MAX_FILE = 350 * 1024 * MiB;

export const DEFAULT_DROPBOX_TUNING: DropboxTuning = { partSize: 16 * MiB, listLimit: 2000 };

/** `tuning` overrides part and page sizes (tests use small ones). */
export function open(location: StoreLocation, ctx: StoreContext, tuning: Partial<DropboxTuning> = {}): Store {
  return new DropboxStore(location, ctx, { ...DEFAULT_DROPBOX_TUNING, ...tuning });
}

/** ferry path -> Dropbox path: "" stays "" (the root, for list_folder), "a/b" -> "/a/b". */
function toDropbox(path: string): string {
  return splitPath(path).length === 0 ? '' : `/${path}`;
}

function toInfo(path: string, meta: FileMetadata): ObjectInfo {
  const info: ObjectInfo = { path, size: meta.size, modTime: new Date(meta.server_modified), hashes: {} };
  if (meta.content_hash) info.hashes.dropbox = meta.content_hash;
  return info;
}

class DropboxStore implements Store {
  readonly provider = 'dropbox' as const;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #client: DropboxClient;
  readonly #tuning: DropboxTuning;

  constructor(location: StoreLocation, ctx: StoreContext, tuning: DropboxTuning) {
    const app = ctx.oauthApps.dropbox;
    this.#tuning = tuning;
    this.#client = new DropboxClient({
      apiUrl: app.apiUrl,
      contentUrl: app.contentUrl ?? app.apiUrl,
      ...oauthAccess(location, ctx),
    });
    // Same Dropbox account (metadata account_id, as recorded at connection time) or, failing that,
    // the same location: the only cases where copy_v2/move_v2 can see both paths.
    const accountId = location.metadata.account_id;
    this.account =
      typeof accountId === 'string' && accountId !== ''
        ? `dropbox:${accountId}`
        : `dropbox:location:${location.id}`;
    this.features = {
      bucketListing: declarations.dropbox.features.bucketListing,
      hashes: declarations.dropbox.hashes,
      upload: {
        minPartSize: tuning.partSize,
        maxPartSize: MAX_REQUEST,
        maxParts: Math.ceil(MAX_FILE / tuning.partSize),
        singleRequestMax: tuning.partSize,
      },
      copy: (from, to, options) => this.#relocate('files/copy_v2', from, to, options),
      move: (from, to, options) => this.#relocate('files/move_v2', from, to, options),
    };
  }

  list(path: string, options?: ListOptions): AsyncIterable<Entry> {
    return listDropbox(this.#client, path, toDropbox(path), this.#tuning.listLimit, options);
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    return toInfo(path, await this.#file(path, options.signal));
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    const { range, signal } = options;
    const dropboxPath = this.#objectPath(path);
    if (range?.length === 0) {
      await this.#file(path, signal);
      return Readable.from([]);
    }
    const res = await this.#client.download(
      'files/download',
      { path: dropboxPath },
      rangeHeader(range),
      path,
      signal,
    );
    return sliceToRange(res.body, res.status, range);
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    const dropboxPath = this.#objectPath(path);
    // A mismatch leaves the file as it is: Dropbox replaced what was there (keeping it as a revision),
    // and the retry replaces it again.
    const sent = new SentHashes('dropbox', ['dropbox']);
    try {
      const meta = await uploadDropbox(
        this.#client,
        path,
        dropboxPath,
        body,
        { partSize: this.#tuning.partSize, maxParts: this.features.upload.maxParts },
        options,
        sent,
      );
      const info = toInfo(path, meta);
      info.verified = await sent.check(path, info.hashes);
      return info;
    } finally {
      sent.discard();
    }
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    // delete_v2 removes folders with everything in them; only objects may go, so look first, and pin
    // the revision seen (parent_rev) so a folder or newer file that took its place is never deleted.
    const meta = await this.#file(path, options.signal);
    await this.#client.rpc(
      'files/delete_v2',
      { path: this.#objectPath(path), parent_rev: meta.rev },
      path,
      options.signal,
    );
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  /** copy_v2 / move_v2. Dropbox refuses to replace; an existing destination FILE is deleted first. */
  async #relocate(
    route: 'files/copy_v2' | 'files/move_v2',
    from: string,
    to: string,
    options: CallOptions = {},
  ): Promise<ObjectInfo> {
    const arg = {
      from_path: this.#objectPath(from),
      to_path: this.#objectPath(to),
      autorename: false,
      allow_ownership_transfer: false,
    };
    const what = `${from} -> ${to}`;
    let result: { metadata: Metadata };
    try {
      result = await this.#client.rpc(route, arg, what, options.signal);
    } catch (err) {
      if (!isFerryError(err, 'conflict')) throw err;
      // Only a file in the way is replaced; a folder there stays a conflict.
      const existing = await this.#file(to, options.signal).catch(() => undefined);
      if (!existing) throw err;
      await this.#client.rpc(
        'files/delete_v2',
        { path: arg.to_path, parent_rev: existing.rev },
        to,
        options.signal,
      );
      result = await this.#client.rpc(route, arg, what, options.signal);
    }
    const meta = result.metadata;
    if (meta['.tag'] !== 'file') throw new FerryError('invalid', `dropbox: ${route} ${what}: not a file`);
    return toInfo(to, meta);
  }

  /** The file at `path`; not_found for folders and the root (folders are not objects). */
  async #file(path: string, signal: AbortSignal | undefined): Promise<FileMetadata> {
    const meta = await this.#client.rpc<Metadata>(
      'files/get_metadata',
      { path: this.#objectPath(path) },
      path,
      signal,
    );
    if (meta['.tag'] !== 'file') throw notFound(`dropbox: ${path} is a folder, not an object`);
    return meta;
  }

  #objectPath(path: string): string {
    parentAndName(path); // validates: not the root, no empty segments
    return `/${path}`;
  }
}
