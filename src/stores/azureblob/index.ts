// The azureblob store: Azure Blob Storage through @azure/storage-blob, authenticated with the storage
// account's shared key (secret: access_key_id = account name, secret_access_key = account key).
// Paths are "container/blob name"; the empty path lists the containers. Server-side copy uses Copy Blob
// within the account; there is no rename, so move is left to the operations layer (copy + delete).
import { PassThrough, Readable } from 'node:stream';
import type { BlobServiceClient } from '@azure/storage-blob';
import { FerryError } from '../../errors.js';
import { OUTBOUND_DEFAULTS } from '../../net/time-bounds.js';
import type { StoreContext, StoreLocation } from '../context.js';
import type {
  CallOptions,
  Entry,
  ListOptions,
  ObjectInfo,
  ReadOptions,
  ResumableWrites,
  Store,
  StoreFeatures,
  WriteOptions,
} from '../contract.js';
import { PartReader } from '../shared/chunks.js';
import { largestPart, type MemoryBudget } from '../shared/memory.js';
import { checkEndpoint } from '../shared/metadata.js';
import { type AzureClient, abortable, createClient } from './client.js';
import { containerCreation } from './containers.js';
import { declarations } from './declaration.js';
import { toFerryError } from './errors.js';
import { listContainers, listFolder } from './list.js';
import { objectPath } from './paths.js';
import {
  beginBlocks,
  stagedBlocks,
  type UploadResult,
  type UploadTuning,
  uploadBlob,
  uploadBlocks,
  uploadLimits,
} from './upload.js';

export interface AzureTuning extends UploadTuning {
  /** Listing page size (the service allows up to 5,000). */
  pageSize: number;
  /** How often a pending server-side copy is polled. */
  copyPollMs: number;
}

const DEFAULT_TUNING: AzureTuning = {
  pageSize: 5000,
  // 4 MiB blocks, as rclone uses, 8 in flight: the same 32 MiB in flight as 4 blocks of 8 MiB, but
  // the emulator (and the service) has more requests to overlap (docs/performance.md, bench/transfer
  // (c)). 50,000 blocks hold 195 GiB; a known larger size grows them.
  partSize: 4 * 1024 * 1024,
  concurrency: 8,
  copyPollMs: 500,
};

/** The one metadata key this store reads and checks before it opens: `endpoint` (docs/api.md, "Metadata"). */
export const checkMetadata = checkEndpoint;

export function open(location: StoreLocation, ctx: StoreContext, tuning: Partial<AzureTuning> = {}): Store {
  return new AzureBlobStore(location, ctx, { ...DEFAULT_TUNING, ...tuning });
}

class AzureBlobStore implements Store {
  readonly provider = 'azureblob' as const;
  readonly account: string;
  readonly features: StoreFeatures;
  readonly #client: AzureClient;
  readonly #service: BlobServiceClient;
  readonly #tuning: AzureTuning;
  readonly #memory: MemoryBudget | undefined;

  constructor(location: StoreLocation, ctx: StoreContext, tuning: AzureTuning) {
    this.#client = createClient(location, ctx.egress, (ctx.outbound ?? OUTBOUND_DEFAULTS).idleMs);
    this.#memory = ctx.memory;
    const { service, serviceUrl, accountName } = this.#client;
    this.#service = service;
    // No block larger than ferry reads into memory: a body that would need one is refused (413)
    // before anything is taken or allocated (docs/api.md, "Files through ferry").
    const largestBlock = Math.min(tuning.largestBlock ?? Number.POSITIVE_INFINITY, largestPart(ctx.memory));
    this.#tuning = { ...tuning, largestBlock };
    // Copy Blob authorizes the source with the destination's key: one account on one endpoint.
    this.account = `azureblob:${accountName}@${serviceUrl}`;
    this.features = {
      bucketListing: declarations.azureblob.features.bucketListing,
      hashes: declarations.azureblob.hashes,
      upload: uploadLimits(this.#tuning),
      copy: (from, to, options) => this.#copy(from, to, options),
      resumable: this.#resumable(),
      createBucket: containerCreation(service),
    };
  }

  #blockClient(path: string) {
    const { container, key } = objectPath(path);
    return this.#service.getContainerClient(container).getBlockBlobClient(key);
  }

  /** Staged blocks continued from the first missing one (Get Block List says which are still staged). */
  #resumable(): ResumableWrites {
    return {
      begin: async (_path, options) => beginBlocks(options.size, this.#tuning),
      check: async (path, upload, parts, options = {}) => {
        try {
          return await stagedBlocks(this.#blockClient(path), upload, parts, options.signal);
        } catch (err) {
          throw toFerryError(err, `write ${path}`, options.signal);
        }
      },
      write: async (path, body, options) => {
        const before = options.done.reduce((n, part) => n + part.size, 0);
        const reader = new PartReader(body, options.size - before);
        try {
          const result = await uploadBlocks(
            this.#blockClient(path),
            reader,
            options,
            this.#tuning,
            this.#memory,
          );
          return written(path, result, options.mimeType);
        } catch (err) {
          body.destroy();
          throw toFerryError(err, `write ${path}`, options.signal);
        }
      },
      // Azure has no call that drops staged blocks: the service drops uncommitted blocks after 7 days.
      abort: async () => {},
    };
  }

  list(path: string, options: ListOptions = {}): AsyncIterable<Entry> {
    const ctx = { service: this.#service, pageSize: this.#tuning.pageSize, signal: options.signal };
    return path === '' ? listContainers(ctx) : listFolder(ctx, path, options.recursive ?? false);
  }

  async stat(path: string, options: CallOptions = {}): Promise<ObjectInfo> {
    const { container, key } = objectPath(path);
    try {
      const props = await this.#service
        .getContainerClient(container)
        .getBlobClient(key)
        .getProperties(abortable(options.signal));
      return {
        path,
        size: props.contentLength ?? 0,
        ...(props.lastModified ? { modTime: props.lastModified } : {}),
        ...(props.contentType ? { mimeType: props.contentType } : {}),
        hashes: props.contentMD5 ? { md5: Buffer.from(props.contentMD5).toString('hex') } : {},
        ...(props.etag ? { etag: props.etag } : {}),
      };
    } catch (err) {
      throw toFerryError(err, `stat ${path}`, options.signal);
    }
  }

  async read(path: string, options: ReadOptions = {}): Promise<Readable> {
    const { container, key } = objectPath(path);
    const blob = this.#service.getContainerClient(container).getBlobClient(key);
    const { offset = 0, length } = options.range ?? {};
    if (length === 0) {
      // download() reads to the end for a count of 0; an empty range still checks the blob exists.
      await this.stat(path, options);
      return Readable.from([]);
    }
    try {
      const response = await blob.download(offset, length, {
        ...abortable(options.signal),
        ...(options.ifMatch === undefined ? {} : { conditions: { ifMatch: options.ifMatch } }),
        // The SDK re-requests a body that ends early; stores never retry.
        maxRetryRequests: 0,
      });
      const body = response.readableStreamBody;
      if (!body) return Readable.from([]);
      return guardStream(body as Readable, path, options.signal);
    } catch (err) {
      if (options.ifMatch !== undefined && (err as { statusCode?: number }).statusCode === 412) {
        throw new FerryError('transient', `read ${path}: the blob changed since it was listed`, {
          cause: err,
        });
      }
      throw toFerryError(err, `read ${path}`, options.signal);
    }
  }

  async write(path: string, body: Readable, options: WriteOptions = {}): Promise<ObjectInfo> {
    const { container, key } = objectPath(path);
    const client = this.#service.getContainerClient(container).getBlockBlobClient(key);
    try {
      return written(
        path,
        await uploadBlob(client, body, options, this.#tuning, this.#memory),
        options.mimeType,
      );
    } catch (err) {
      body.destroy();
      throw toFerryError(err, `write ${path}`, options.signal);
    }
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    const { container, key } = objectPath(path);
    try {
      await this.#service.getContainerClient(container).getBlobClient(key).delete(abortable(options.signal));
    } catch (err) {
      throw toFerryError(err, `delete ${path}`, options.signal);
    }
  }

  async close(): Promise<void> {
    this.#client.close();
  }

  /**
   * Copy Blob: within one storage account the destination request's shared key also authorizes the
   * source, and the copy usually completes at once; a pending one is polled until it settles.
   * https://learn.microsoft.com/en-us/rest/api/storageservices/copy-blob
   */
  async #copy(from: string, to: string, options: CallOptions = {}): Promise<ObjectInfo> {
    const source = objectPath(from);
    const target = objectPath(to);
    const sourceUrl = this.#service.getContainerClient(source.container).getBlobClient(source.key).url;
    const client = this.#service.getContainerClient(target.container).getBlobClient(target.key);
    try {
      const poller = await client.beginCopyFromURL(sourceUrl, {
        ...abortable(options.signal),
        intervalInMs: this.#tuning.copyPollMs,
      });
      await poller.pollUntilDone();
    } catch (err) {
      throw toFerryError(err, `copy ${from} to ${to}`, options.signal);
    }
    return this.stat(to, options);
  }
}

function written(path: string, result: UploadResult, mimeType: string | undefined): ObjectInfo {
  return {
    path,
    size: result.size,
    modTime: new Date(),
    ...(mimeType ? { mimeType } : {}),
    hashes: { md5: result.md5.toString('hex') },
    ...(result.proven ? { verified: ['md5'] } : {}),
  };
}

/** Re-emits the download body's failures as FerryErrors, so readers see one error vocabulary. */
function guardStream(body: Readable, path: string, signal: AbortSignal | undefined): Readable {
  const out = new PassThrough({ highWaterMark: 64 * 1024 });
  body.on('error', (err) => out.destroy(toFerryError(err, `read ${path}`, signal) as Error));
  out.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  body.pipe(out);
  return out;
}
