// Opens a location's store and keeps the location's health in step with what the provider says: a
// provider that rejects the credentials for good marks the location failed (docs/api.md, "Location
// health"). The store handed out is wrapped so that this holds for every call, whoever makes it (a
// route, a worker), and the error names the location. OAuth stores read the location's live access
// token (AccessTokens), which renews an expired or refused token through the refresher's lease.
import type { Readable } from 'node:stream';
import type { LocationRow } from '../db/schema.js';
import { FerryError, isFerryError } from '../errors.js';
import { isOAuthProvider } from '../providers.js';
import type { StoreContext } from '../stores/context.js';
import type {
  BucketCreation,
  CallOptions,
  CopyOptions,
  Entry,
  ListOptions,
  ObjectInfo,
  ReadOptions,
  ResumableWrites,
  Store,
  StoreFeatures,
  WriteOptions,
} from '../stores/contract.js';
import { openStore } from '../stores/index.js';
import type { Locations } from './locations/locations.js';
import type { AccessTokens } from './refresher/access-tokens.js';

export class Storage {
  constructor(
    private readonly locations: Locations,
    private readonly ctx: StoreContext,
    private readonly tokens: AccessTokens,
  ) {}

  /** The location's store; its failures keep the location's status true. */
  open(row: LocationRow): Store {
    const location = this.locations.storeLocation(row);
    if (isOAuthProvider(row.provider))
      location.tokens = this.tokens.source(row.id, row.label, row.secret_version);
    return observed(openStore(location, this.ctx), (err) => this.observe(row, err));
  }

  /**
   * Records what a provider error says about the location, and gives back the error to throw. OAuth
   * stores get here only after a renewed token was refused too.
   */
  private async observe(row: LocationRow, err: unknown): Promise<unknown> {
    if (!isFerryError(err, 'credentials_rejected')) return err;
    await this.locations.markFailed(row.id, err.message);
    return new FerryError(
      'credentials_rejected',
      `location ${row.label} (${row.id}) is now failed: ${err.message}`,
      {
        cause: err,
      },
    );
  }

  /** Runs `work` with the location's store open, and closes it after. */
  async use<T>(row: LocationRow, work: (store: Store) => Promise<T>): Promise<T> {
    const store = this.open(row);
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  /**
   * A listing whose first entry has already been fetched, so that a missing folder or rejected
   * credentials are known before an answer starts; later failures end the iteration with the error.
   */
  async list(row: LocationRow, path: string, recursive: boolean): Promise<AsyncIterable<Entry>> {
    const store = this.open(row);
    const iterator = store.list(path, { recursive })[Symbol.asyncIterator]();
    let first: IteratorResult<Entry>;
    try {
      first = await iterator.next();
    } catch (err) {
      await store.close();
      throw err;
    }
    return {
      async *[Symbol.asyncIterator]() {
        try {
          if (first.done) return;
          yield first.value;
          while (true) {
            const next = await iterator.next();
            if (next.done) return;
            yield next.value;
          }
        } finally {
          await iterator.return?.();
          await store.close();
        }
      },
    };
  }
}

/** The same store, with every failure passed through `onError` (which returns the error to throw). */
function observed(store: Store, onError: (err: unknown) => Promise<unknown>): Store {
  async function call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw await onError(err);
    }
  }
  const { copy, move, resumable, createBucket } = store.features;
  const features: StoreFeatures = {
    bucketListing: store.features.bucketListing,
    hashes: store.features.hashes,
    upload: store.features.upload,
    ...(copy ? { copy: (from: string, to: string, o?: CopyOptions) => call(() => copy(from, to, o)) } : {}),
    ...(move ? { move: (from: string, to: string, o?: CallOptions) => call(() => move(from, to, o)) } : {}),
    ...(resumable
      ? {
          resumable: {
            begin: (path, o) => call(() => resumable.begin(path, o)),
            check: (path, upload, parts, o) => call(() => resumable.check(path, upload, parts, o)),
            write: (path, body, o) => call(() => resumable.write(path, body, o)),
            abort: (path, upload, o) => call(() => resumable.abort(path, upload, o)),
          } satisfies ResumableWrites,
        }
      : {}),
    ...(createBucket
      ? {
          createBucket: {
            checkName: (name) => createBucket.checkName(name),
            create: (name, o) => call(() => createBucket.create(name, o)),
          } satisfies BucketCreation,
        }
      : {}),
  };
  return {
    provider: store.provider,
    account: store.account,
    features,
    list(path: string, options?: ListOptions): AsyncIterable<Entry> {
      const inner = store.list(path, options);
      return {
        async *[Symbol.asyncIterator]() {
          try {
            yield* inner;
          } catch (err) {
            throw await onError(err);
          }
        },
      };
    },
    stat: (path: string, o?: CallOptions): Promise<ObjectInfo> => call(() => store.stat(path, o)),
    read: (path: string, o?: ReadOptions): Promise<Readable> => call(() => store.read(path, o)),
    write: (path: string, body: Readable, o?: WriteOptions): Promise<ObjectInfo> =>
      call(() => store.write(path, body, o)),
    delete: (path: string, o?: CallOptions): Promise<void> => call(() => store.delete(path, o)),
    close: () => store.close(),
  };
}
