// Real servers for the object-operation tests: one s3rver (with the fault proxy in front of it) and one
// azurite, started once per test file, and stores opened on them as the worker opens them. Two S3
// locations with the same access key on the same s3rver share an account (server-side copy); another
// key or another provider does not (streamed copy). Tunings are small so that a 12 MiB object is
// several parts on both sides.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import { createEgress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import { open as openAzure } from '../../src/stores/azureblob/index.js';
import { DEFAULT_OAUTH_APPS, type StoreContext } from '../../src/stores/context.js';
import type { Store } from '../../src/stores/contract.js';
import { createS3Store } from '../../src/stores/s3/index.js';
import { awsS3, azureBlob } from '../../src/stores/shared/sdk.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';

export const MiB = 1024 * 1024;

const ctx: StoreContext = { egress: createEgress(['127.0.0.0/8']), oauthApps: DEFAULT_OAUTH_APPS };

export interface Servers {
  s3rver: S3rverHandle;
  azurite: AzuriteHandle;
  /** In front of s3rver: dropNext / failNext. */
  s3Proxy: FaultProxy;
  /** An S3 store with access key `key` (default FERRYKEYA) on s3rver, directly or through the proxy. */
  s3(key?: string, options?: { viaProxy?: boolean }): Store;
  azure(): Store;
  newBucket(): Promise<string>;
  newContainer(): Promise<string>;
  close(): Promise<void>;
}

export async function startServers(): Promise<Servers> {
  const { BlobServiceClient, StorageSharedKeyCredential } = azureBlob();
  const { CreateBucketCommand, S3Client } = awsS3();
  const [s3rver, azurite] = await Promise.all([startS3rver(), startAzurite()]);
  const s3Proxy = await startFaultProxy(s3rver.endpoint);
  const admin = new S3Client({
    endpoint: s3rver.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const blobAdmin = new BlobServiceClient(
    azurite.endpoint,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  );
  const opened: Store[] = [];
  const keep = (store: Store) => {
    opened.push(store);
    return store;
  };
  return {
    s3rver,
    azurite,
    s3Proxy,
    s3(key = 'FERRYKEYA', options = {}) {
      const endpoint = options.viaProxy ? s3Proxy.url : s3rver.endpoint;
      return keep(
        createS3Store(
          {
            id: `loc-s3-${key}`,
            provider: 's3',
            metadata: { endpoint, region: 'us-east-1' },
            secret: new Secret({ access_key_id: key, secret_access_key: `secret-${key}` }),
          },
          ctx,
          { partSize: 5 * MiB, singleRequestMax: 5 * MiB, queueSize: 3, pageSize: 4 },
        ),
      );
    },
    azure() {
      return keep(
        openAzure(
          {
            id: 'loc-azure',
            provider: 'azureblob',
            metadata: { endpoint: azurite.endpoint },
            secret: new Secret({ access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY }),
          },
          ctx,
          { partSize: 1 * MiB, concurrency: 3, pageSize: 4 },
        ),
      );
    },
    async newBucket() {
      const name = `ferry-${randomBytes(6).toString('hex')}`;
      await admin.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async newContainer() {
      const name = `ferry-${randomBytes(6).toString('hex')}`;
      await blobAdmin.createContainer(name);
      return name;
    },
    async close() {
      for (const store of opened) await store.close();
      admin.destroy();
      await s3Proxy.close();
      await Promise.all([s3rver.close(), azurite.close()]);
    },
  };
}

export async function put(store: Store, path: string, data: Buffer): Promise<void> {
  await store.write(path, ReadableStream.from([data]), { size: data.length });
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function get(store: Store, path: string): Promise<Buffer> {
  return readAll(await store.read(path));
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** A store that behaves as `store` except for the members given (a test double over a real store). */
export function override(
  store: Store,
  members: Partial<Pick<Store, 'read' | 'write' | 'delete' | 'stat'>> & {
    features?: Partial<Store['features']>;
  },
): Store {
  const { features, ...methods } = members;
  return {
    provider: store.provider,
    account: store.account,
    features: { ...store.features, ...features },
    list: (path, options) => store.list(path, options),
    stat: methods.stat ?? ((path, options) => store.stat(path, options)),
    read: methods.read ?? ((path, options) => store.read(path, options)),
    write: methods.write ?? ((path, body, options) => store.write(path, body, options)),
    delete: methods.delete ?? ((path, options) => store.delete(path, options)),
    close: () => store.close(),
  };
}

/**
 * The outcome of a copy or move without its `checksums` (docs/api.md, "Reports") and the destination's
 * `etag` (kept for an undo, docs/api.md "Undo"), which are checked here: when the copy compared a hash
 * kind, both sides name the same kind and value, and an md5 is the data's; an ETag is never empty.
 */
export function withoutChecksums<
  T extends { checksums?: { source: string; destination: string }; etag?: string },
>(outcome: T, data: Buffer): Omit<T, 'checksums' | 'etag'> {
  const { checksums, etag, ...rest } = outcome;
  if (checksums !== undefined) {
    assert.equal(checksums.destination, checksums.source);
    const [kind, value] = checksums.source.split(':');
    if (kind === 'md5') assert.equal(value, createHash('md5').update(data).digest('hex'));
  }
  if (etag !== undefined) assert.ok(etag.length > 0, 'an ETag, when the write reported one, is not empty');
  return rest;
}
