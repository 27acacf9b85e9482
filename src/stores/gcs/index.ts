// The gcs store: Google Cloud Storage through @google-cloud/storage's JSON API client, authenticated
// with the service-account key from the secret. Paths are "bucket/object name"; the empty path lists
// the buckets of the project (metadata project_id, else the key's). Server-side copy uses objects
// rewrite (the library repeats the call until GCS says it is done); there is no rename, so move is
// left to the operations layer (copy + delete).
import { PassThrough, Readable } from 'node:stream';
import type { File, Storage } from '@google-cloud/storage';
import { FerryError } from '../../errors.js';
import { OUTBOUND_DEFAULTS, seconds } from '../../net/time-bounds.js';
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
import { checkEndpoint } from '../shared/metadata.js';
import { gcsBucketCreation } from './buckets.js';
import { createClient, DEFAULT_ENDPOINT, type GcsClient, type GcsSettings, readSettings } from './client.js';
import { declarations } from './declaration.js';
import { toFerryError } from './errors.js';
import { listBuckets, listFolder } from './list.js';
import { objectPath } from './paths.js';
import { checkTuning, type UploadTuning, uploadLimits, uploadObject } from './upload.js';

export interface GcsTuning extends UploadTuning {
  /** Listing page size (the API allows up to 1,000). */
  pageSize: number;
}

const DEFAULT_TUNING: GcsTuning = {
  pageSize: 1000,
  chunkSize: 8 * 1024 * 1024,
};

/** The one metadata key this store reads and checks before it opens: `endpoint` (docs/api.md, "Metadata"). */
export const checkMetadata = checkEndpoint;

export function open(location: StoreLocation, ctx: StoreContext, tuning: Partial<GcsTuning> = {}): Store {
  const settings = readSettings(location);
  const all = { ...DEFAULT_TUNING, ...tuning };
  checkTuning(all);
  return new GcsStore(settings, ctx, all);
}

/** The object resource fields the store reads. */
interface ObjectResource {
  size?: string | number;
  updated?: string;
  contentType?: string;
  md5Hash?: string;
  crc32c?: string;
}

class GcsStore implements Store {
  readonly provider = 'gcs' as const;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #settings: GcsSettings;
  readonly #ctx: StoreContext;
  readonly #tuning: GcsTuning;
  #client: Promise<GcsClient> | undefined;

  constructor(settings: GcsSettings, ctx: StoreContext, tuning: GcsTuning) {
    this.#settings = settings;
    this.#ctx = ctx;
    this.#tuning = tuning;
    // One service account on one endpoint: its rewrites can reach every bucket it can read.
    this.account = `gcs:${settings.key.reveal().client_email}@${settings.endpoint ?? DEFAULT_ENDPOINT}`;
    this.features = {
      bucketListing: declarations.gcs.features.bucketListing,
      hashes: declarations.gcs.hashes,
      upload: uploadLimits(tuning),
      copy: (from, to, options) => this.#copy(from, to, options),
      createBucket: gcsBucketCreation(() => this.#storage(), settings.projectId),
    };
  }

  list(path: string, options: ListOptions = {}): AsyncIterable<Entry> {
    const open = async () => ({
      storage: await this.#storage(),
      pageSize: this.#tuning.pageSize,
      projectId: this.#settings.projectId,
      signal: options.signal,
    });
    return (async function* () {
      const ctx = await open();
      yield* path === '' ? listBuckets(ctx) : listFolder(ctx, path, options.recursive ?? false);
    })();
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    const file = await this.#file(path);
    try {
      const [metadata] = await file.getMetadata();
      return objectInfo(path, metadata as ObjectResource);
    } catch (err) {
      throw toFerryError(err, `stat ${path}`, options.signal);
    }
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    options.signal?.throwIfAborted();
    const file = await this.#file(path);
    const { offset = 0, length } = options.range ?? {};
    if (length === 0) {
      await this.stat(path, options);
      return Readable.from([]);
    }
    const ranged = offset > 0 || length !== undefined;
    // Whole-object reads are checked against the object's CRC32C; ranges cannot be.
    const stream = file.createReadStream(
      ranged ? { start: offset, ...(length === undefined ? {} : { end: offset + length - 1 }) } : {},
    );
    try {
      await answered(stream);
    } catch (err) {
      stream.destroy();
      throw toFerryError(err, `read ${path}`, options.signal);
    }
    return guardStream(stream, path, options.signal, (this.#ctx.outbound ?? OUTBOUND_DEFAULTS).idleMs);
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    const file = await this.#file(path);
    let verified: ObjectInfo['verified'];
    try {
      verified = await uploadObject(file, path, body, options, this.#tuning, (metadata) => {
        return objectInfo(path, metadata as ObjectResource).hashes;
      });
    } catch (err) {
      body.destroy();
      throw toFerryError(err, `write ${path}`, options.signal);
    }
    return { ...objectInfo(path, file.metadata as ObjectResource), verified };
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    const file = await this.#file(path);
    try {
      await file.delete();
    } catch (err) {
      throw toFerryError(err, `delete ${path}`, options.signal);
    }
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client) await (await client.catch(() => undefined))?.close();
  }

  /** https://cloud.google.com/storage/docs/json_api/v1/objects/rewrite */
  async #copy(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    const source = await this.#file(from);
    const target = await this.#file(to);
    try {
      const [, response] = await source.copy(target);
      const resource = (response as { resource?: ObjectResource } | undefined)?.resource;
      return resource ? objectInfo(to, resource) : await this.stat(to, options);
    } catch (err) {
      throw toFerryError(err, `copy ${from} to ${to}`, options.signal);
    }
  }

  async #file(path: string): Promise<File> {
    const { bucket, key } = objectPath(path);
    return (await this.#storage()).bucket(bucket).file(key);
  }

  /** The client is built on first use: a caller-supplied endpoint needs its gateway listening first. */
  async #storage(): Promise<Storage> {
    this.#client ??= createClient(this.#settings, this.#ctx.egress, this.#ctx.outbound);
    return (await this.#client).storage;
  }
}

function objectInfo(path: string, metadata: ObjectResource): ObjectInfo {
  const hashes: ObjectInfo['hashes'] = {};
  if (metadata.md5Hash) hashes.md5 = Buffer.from(metadata.md5Hash, 'base64').toString('hex');
  if (metadata.crc32c) hashes.crc32c = Buffer.from(metadata.crc32c, 'base64').toString('hex');
  return {
    path,
    size: Number(metadata.size ?? 0),
    ...(metadata.updated ? { modTime: new Date(metadata.updated) } : {}),
    ...(metadata.contentType ? { mimeType: metadata.contentType } : {}),
    hashes,
  };
}

/**
 * Starts a download and waits for its answer, so a missing object (or any refusal) is thrown before
 * the stream is handed out. The library emits 'response' for every answer; for an error answer it
 * then reads the body and fails the stream with it.
 */
function answered(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: unknown) => {
      stream.off('response', onResponse);
      reject(err);
    };
    const onResponse = (res: { statusCode?: number }) => {
      if ((res.statusCode ?? 500) < 300) {
        stream.off('error', onError);
        resolve();
      }
    };
    stream.once('error', onError);
    stream.on('response', onResponse);
    stream.read(0); // the library sends the request on the first read
  });
}

/**
 * Re-emits the download body's failures as FerryErrors, so readers see one error vocabulary, and ends
 * the download when the caller's signal fires (the library takes no signal of its own). A body that
 * gives no byte for `idleMs` while its reader waits for one fails as transient: the library (over
 * node-fetch) never reports a connection cut in the middle of a body, which the gateway passes on as
 * a cut, so without this bound such a download would wait forever (docs/api.md, "Time bounds").
 */
function guardStream(
  body: Readable,
  path: string,
  signal: AbortSignal | undefined,
  idleMs: number,
): Readable {
  const out = new PassThrough({ highWaterMark: 64 * 1024 });
  const onAbort = () => out.destroy(signal?.reason as Error);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const wait = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      out.destroy(new FerryError('transient', `gcs: read ${path}: no byte for ${seconds(idleMs)}`));
    }, idleMs);
    timer.unref();
  };
  body.on('data', (chunk: Buffer) => {
    if (out.write(chunk)) {
      wait();
      return;
    }
    // The reader is behind: its pace is not the provider's silence.
    clearTimeout(timer);
    body.pause();
    out.once('drain', () => {
      wait();
      body.resume();
    });
  });
  body.once('end', () => {
    clearTimeout(timer);
    out.end();
  });
  body.on('error', (err) => out.destroy(toFerryError(err, `read ${path}`, signal) as Error));
  out.on('close', () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (!body.destroyed) body.destroy();
  });
  wait();
  return out;
}
