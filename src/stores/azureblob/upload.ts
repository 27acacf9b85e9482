// Writes a block blob from a stream with bounded memory. A body that fits in one part goes up as one
// Put Blob; a longer one as staged blocks (Put Block, then Put Block List), at most `concurrency`
// blocks in memory at once. The whole-object MD5 is computed on the way (on the hashing thread) and
// stored as Content-MD5 (Azure sets it by itself only for single-request uploads). Nothing is committed until the body has
// ended at its declared size, so a failed write leaves no blob behind (uncommitted blocks expire).
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-list
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlockBlobClient } from '@azure/storage-blob';
import { invalid } from '../../errors.js';
import type { UploadLimits, WriteOptions } from '../contract.js';
import { PartReader, readFirst, uploadParts } from '../shared/chunks.js';
import { ThreadedHash } from '../shared/hash-thread.js';
import type { MemoryBudget } from '../shared/memory.js';
import { abortable } from './client.js';

const MiB = 1024 * 1024;

/** Azure's block limits (service version 2019-12-12 and later). */
export const MAX_BLOCKS = 50_000;
export const MAX_BLOCK_SIZE = 4000 * MiB;
export const MAX_BLOB_SIZE = MAX_BLOCKS * MAX_BLOCK_SIZE;

export interface UploadTuning {
  /** Block size for bodies of unknown length, and the single-request threshold. */
  partSize: number;
  /** Blocks uploading at once. */
  concurrency: number;
}

export function uploadLimits(tuning: UploadTuning): UploadLimits {
  return {
    minPartSize: tuning.partSize,
    maxPartSize: MAX_BLOCK_SIZE,
    maxParts: MAX_BLOCKS,
    singleRequestMax: tuning.partSize,
  };
}

/** The block size for a body: the configured one, grown (in whole MiB) so 50,000 blocks hold `size`. */
export function blockSizeFor(size: number | undefined, tuning: UploadTuning): number {
  if (size === undefined) return tuning.partSize;
  if (size > MAX_BLOB_SIZE) throw invalid(`azureblob: ${size} bytes is more than a block blob can hold`);
  const needed = Math.ceil(size / MAX_BLOCKS / MiB) * MiB;
  return Math.max(tuning.partSize, needed);
}

export interface UploadResult {
  size: number;
  md5: Buffer;
}

export async function uploadBlob(
  client: BlockBlobClient,
  body: Readable,
  options: WriteOptions,
  tuning: UploadTuning,
  memory?: MemoryBudget,
): Promise<UploadResult> {
  const partSize = blockSizeFor(options.size, tuning);
  const reader = new PartReader(body, options.size);
  const headers = (md5: Buffer) => ({
    blobContentMD5: md5,
    ...(options.mimeType ? { blobContentType: options.mimeType } : {}),
  });
  const { data: first, release: firstRelease } = await readFirst(reader, partSize, memory, options.signal);
  let parts = false; // from here on uploadParts() gives the first part's budget back
  try {
    parts = !(await reader.atEnd());
    if (!parts) {
      reader.assertComplete();
      const md5 = createHash('md5').update(first).digest();
      await client.upload(first, first.length, {
        blobHTTPHeaders: headers(md5),
        ...abortable(options.signal),
      });
      options.onProgress?.(first.length);
      return { size: first.length, md5 };
    }
  } finally {
    if (!parts) firstRelease();
  }

  // Hashed on the hashing thread, beside the transfer: in the event loop, MD5 alone took a quarter
  // of a large copy's time.
  const hash = new ThreadedHash('md5');
  const blockIds: string[] = [];
  let size: number;
  try {
    ({ size } = await uploadParts({
      reader,
      partSize,
      concurrency: tuning.concurrency,
      first,
      firstRelease,
      memory,
      maxParts: MAX_BLOCKS,
      signal: options.signal,
      onProgress: options.onProgress,
      uploadPart: async ({ index, data }) => {
        // Runs in part order: the running hash and the block list stay in object order.
        const hashed = hash.update(data);
        const id = blockId(index);
        blockIds[index] = id;
        // The part's buffer is reused once both are done with it.
        await Promise.all([client.stageBlock(id, data, data.length, abortable(options.signal)), hashed]);
      },
    }));
  } catch (err) {
    hash.discard();
    throw err;
  }
  const md5 = await hash.digest();
  await client.commitBlockList(blockIds, { blobHTTPHeaders: headers(md5), ...abortable(options.signal) });
  return { size, md5 };
}

/** Block ids must all have the same length within a blob: a fixed-width counter, base64. */
function blockId(index: number): string {
  return Buffer.from(`ferry-block-${String(index).padStart(6, '0')}`).toString('base64');
}
