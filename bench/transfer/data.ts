// The data of bench/transfer and the checks after each run: the source bucket on s3rver (2,000 × 4 KiB
// under small/ and 20 × 8 MiB under large/, and one 1 GiB object alone in its own bucket), fresh
// destination buckets and containers, what a destination holds (objects and bytes, listed by the bench
// itself), and their removal after each run so s3rver's directory and azurite's memory stay small.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { AZURITE_ACCOUNT, AZURITE_KEY } from '../../test/support/azurite.js';

const KiB = 1024;
const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

export interface DataSet {
  objects: number;
  bytes: number;
}

/** Items (a) and (b): 2,000 × 4 KiB plus 20 × 8 MiB, all in bucket SOURCE_BUCKET. */
export const SOURCE_BUCKET = 'source';
export const SMALL = { count: 2000, size: 4 * KiB };
export const LARGE = { count: 20, size: 8 * MiB };
export const MIXED: DataSet = {
  objects: SMALL.count + LARGE.count,
  bytes: SMALL.count * SMALL.size + LARGE.count * LARGE.size,
};
/** Item (c): one object of 1 GiB, alone in BIG_BUCKET. */
export const BIG_BUCKET = 'big';
export const BIG_KEY = 'one-gib.bin';
export const BIG: DataSet = { objects: 1, bytes: GiB };

export function smallKey(i: number): string {
  return `small/file-${String(i).padStart(4, '0')}.bin`;
}

function largeKey(i: number): string {
  return `large/file-${String(i).padStart(2, '0')}.bin`;
}

async function inParallel(items: Array<() => Promise<unknown>>, n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await (items[next++] as () => Promise<unknown>)();
  };
  await Promise.all(Array.from({ length: n }, worker));
}

/** Seeds SOURCE_BUCKET, and BIG_BUCKET when `big` (random bytes: nothing compresses or dedupes). */
export async function seedSource(client: S3Client, big: boolean): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: SOURCE_BUCKET }));
  const put = (key: string, size: number) => () =>
    client.send(new PutObjectCommand({ Bucket: SOURCE_BUCKET, Key: key, Body: randomBytes(size) }));
  await inParallel(
    [
      ...Array.from({ length: LARGE.count }, (_, i) => put(largeKey(i), LARGE.size)),
      ...Array.from({ length: SMALL.count }, (_, i) => put(smallKey(i), SMALL.size)),
    ],
    16,
  );
  if (big) await seedBig(client);
  const held = await s3Holds(client, SOURCE_BUCKET);
  if (held.objects !== MIXED.objects || held.bytes !== MIXED.bytes)
    throw new Error(`seeding ${SOURCE_BUCKET}: it holds ${describe(held)}, expected ${describe(MIXED)}`);
}

async function seedBig(client: S3Client): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: BIG_BUCKET }));
  // One request, streamed: s3rver writes it to disk as it arrives (a single PUT may be up to 5 GiB).
  const chunk = 8 * MiB;
  const body = Readable.from(
    (function* () {
      for (let done = 0; done < BIG.bytes; done += chunk)
        yield randomBytes(Math.min(chunk, BIG.bytes - done));
    })(),
  );
  await client.send(
    new PutObjectCommand({ Bucket: BIG_BUCKET, Key: BIG_KEY, Body: body, ContentLength: BIG.bytes }),
  );
  const held = await s3Holds(client, BIG_BUCKET);
  if (held.objects !== BIG.objects || held.bytes !== BIG.bytes)
    throw new Error(`seeding ${BIG_BUCKET}: it holds ${describe(held)}, expected ${describe(BIG)}`);
}

export function describe(d: DataSet): string {
  return `${d.objects} objects, ${d.bytes} bytes`;
}

export async function s3Holds(client: S3Client, bucket: string): Promise<DataSet> {
  const held = { objects: 0, bytes: 0 };
  let ContinuationToken: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken }));
    for (const o of page.Contents ?? []) {
      held.objects++;
      held.bytes += o.Size ?? 0;
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return held;
}

export async function createBucket(client: S3Client, bucket: string): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
}

export async function removeBucket(client: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key as string }));
    if (keys.length === 0) break;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
  }
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
}

export function azureService(endpoint: string): BlobServiceClient {
  return new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY));
}

export async function azureHolds(service: BlobServiceClient, container: string): Promise<DataSet> {
  const held = { objects: 0, bytes: 0 };
  for await (const blob of service.getContainerClient(container).listBlobsFlat()) {
    held.objects++;
    held.bytes += blob.properties.contentLength ?? 0;
  }
  return held;
}

/** Throws unless `held` is exactly `expected`: a run that copied nothing must not look fast. */
export function check(what: string, held: DataSet, expected: DataSet): void {
  if (held.objects !== expected.objects || held.bytes !== expected.bytes)
    throw new Error(`${what}: the destination holds ${describe(held)}, expected ${describe(expected)}`);
}
