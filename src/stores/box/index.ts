// The Box store: Box API 2.0 over undici with the location's OAuth access token. Paths are resolved
// to ids from the root folder "0" (resolve.ts); writes create missing folders. Declares server-side
// copy (POST /files/{id}/copy) and move (PUT /files/{id} with a new parent), and the sha1 hash.
import { Readable } from 'node:stream';
import { FerryError } from '../../errors.js';
import { parseRetryAfter } from '../../net/failures.js';
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
import { parentAndName } from '../shared/paths.js';
import { SentHashes } from '../shared/proof.js';
import { rangeHeader, sliceToRange } from '../shared/range.js';
import { BoxClient, type BoxItem, ITEM_FIELDS } from './client.js';
import { declarations } from './declaration.js';
import { conflictOf } from './errors.js';
import { listBox } from './list.js';
import { BoxResolver } from './resolve.js';
import { uploadBox } from './upload.js';

export interface BoxTuning {
  /** Largest object sent in one request; Box takes chunked uploads only from 20 MB. */
  singleRequestMax: number;
  /** Box's usual session part size, reported in features (each session states its own). */
  partSize: number;
  /** Parts in flight at once in a chunked upload. */
  concurrency: number;
  /** Folder items page size (Box: at most 1000). */
  pageSize: number;
  /** Times a commit answered 202 is sent again. */
  commitPolls: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_BOX_TUNING: BoxTuning = {
  singleRequestMax: 20 * MiB,
  partSize: 8 * MiB,
  concurrency: 4,
  pageSize: 1000,
  commitPolls: 10,
};

/** `tuning` overrides sizes (tests use small ones). */
export function open(location: StoreLocation, ctx: StoreContext, tuning: Partial<BoxTuning> = {}): Store {
  return new BoxStore(location, ctx, { ...DEFAULT_BOX_TUNING, ...tuning });
}

function toInfo(path: string, file: BoxItem): ObjectInfo {
  const info: ObjectInfo = { path, size: file.size ?? 0, hashes: {} };
  if (file.modified_at) info.modTime = new Date(file.modified_at);
  if (file.sha1) info.hashes.sha1 = file.sha1.toLowerCase();
  return info;
}

class BoxStore implements Store {
  readonly provider = 'box' as const;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #client: BoxClient;
  readonly #resolver: BoxResolver;
  readonly #tuning: BoxTuning;

  constructor(location: StoreLocation, ctx: StoreContext, tuning: BoxTuning) {
    const app = ctx.oauthApps.box;
    this.#tuning = tuning;
    this.#client = new BoxClient({
      apiUrl: app.apiUrl,
      uploadUrl: app.contentUrl ?? app.apiUrl,
      ...oauthAccess(location, ctx),
    });
    this.#resolver = new BoxResolver(this.#client, tuning.pageSize);
    // Same Box user (metadata user_id, as recorded at connection time) or, failing that, the same
    // location: the cases where one token can see both ids of a copy or move.
    const userId = location.metadata.user_id;
    this.account =
      typeof userId === 'string' && userId !== '' ? `box:${userId}` : `box:location:${location.id}`;
    this.features = {
      bucketListing: declarations.box.features.bucketListing,
      hashes: declarations.box.hashes,
      upload: {
        minPartSize: tuning.partSize,
        maxPartSize: 128 * MiB,
        maxParts: 10_000,
        singleRequestMax: tuning.singleRequestMax,
      },
      copy: (from, to, options) => this.#relocate('copy', from, to, options),
      move: (from, to, options) => this.#relocate('move', from, to, options),
    };
  }

  list(path: string, options?: ListOptions): AsyncIterable<Entry> {
    return listBox(this.#resolver, path, options);
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    return toInfo(path, await this.#resolver.file(path, options.signal));
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    const { range, signal } = options;
    const file = await this.#resolver.file(path, signal);
    if (range?.length === 0) return Readable.from([]);
    const header = rangeHeader(range);
    const headers: Record<string, string> = header ? { range: header } : {};
    // "Download file": GET /files/{id}/content answers 302 to a short-lived download URL on another
    // host, or 202 with Retry-After while the file is not ready yet.
    const res = await this.#client.apiRaw({
      method: 'GET',
      path: `/files/${file.id}/content`,
      headers,
      accept: [302, 202],
      signal,
      operation: `download ${path}`,
    });
    if (res.status === 202) {
      res.body.resume();
      throw new FerryError('transient', `box: download ${path}: not ready for download yet`, {
        retryAfterSeconds: parseRetryAfter(res.headers['retry-after']) ?? 1,
      });
    }
    if (res.status !== 302) return sliceToRange(res.body, res.status, range);
    res.body.resume();
    const location = res.headers.location;
    const target = Array.isArray(location) ? location[0] : location;
    if (!target) throw new FerryError('transient', `box: download ${path}: redirect without a Location`);
    // The download URL carries its own authorization: the bearer token is not sent to that host.
    const download = await this.#client.http.send({
      method: 'GET',
      url: new URL(target, this.#client.apiUrl(`/files/${file.id}/content`)).toString(),
      headers,
      anonymous: true,
      signal,
      operation: `download ${path}`,
    });
    return sliceToRange(download.body, download.status, range);
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    const { parent, name } = parentAndName(path);
    // Box checks the SHA-1s it was given; the one it answers is compared too, so what it stored is
    // proven and not only what it received. A mismatch leaves the file as it is (what was there is
    // kept as a version), and the retry uploads it again.
    const sent = new SentHashes('box', ['sha1']);
    try {
      const file = await uploadBox(
        this.#client,
        this.#resolver,
        { path, parent, name },
        body,
        this.#tuning,
        options,
        sent,
      );
      const info = toInfo(path, file);
      info.verified = await sent.check(path, info.hashes);
      return info;
    } finally {
      sent.discard();
    }
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    const file = await this.#resolver.file(path, options.signal);
    await this.#client.http.discard({
      method: 'DELETE',
      url: this.#client.apiUrl(`/files/${file.id}`),
      signal: options.signal,
      operation: `delete ${path}`,
    });
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  /**
   * Copy (POST /files/{id}/copy) or move (PUT /files/{id} with a new parent and name). Box refuses
   * to replace: a file in the way (409 item_name_in_use) is deleted and the call made once more; a
   * folder in the way stays a conflict.
   */
  async #relocate(
    kind: 'copy' | 'move',
    from: string,
    to: string,
    options: CallOptions = {},
  ): Promise<ObjectInfo> {
    const { signal } = options;
    const source = await this.#resolver.file(from, signal);
    const { parent, name } = parentAndName(to);
    const what = `${kind} ${from} -> ${to}`;
    const file = await this.#resolver.withFolder(parent, true, signal, async (folderId) => {
      const call = () =>
        this.#client.api<BoxItem>({
          method: kind === 'copy' ? 'POST' : 'PUT',
          path: kind === 'copy' ? `/files/${source.id}/copy` : `/files/${source.id}`,
          query: { fields: ITEM_FIELDS },
          json: { name, parent: { id: folderId } },
          signal,
          operation: what,
        });
      try {
        return await call();
      } catch (err) {
        const inTheWay = conflictOf(err);
        if (inTheWay?.type !== 'file' || inTheWay.id === source.id) throw err;
        await this.#client.http.discard({
          method: 'DELETE',
          url: this.#client.apiUrl(`/files/${inTheWay.id}`),
          signal,
          operation: `${what}: delete the file in the way`,
        });
        return call();
      }
    });
    return toInfo(to, file);
  }
}
