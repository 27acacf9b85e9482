// Writes a block blob from a stream with bounded memory. A body that fits in one part goes up as one
// Put Blob; a longer one as staged blocks (Put Block, then Put Block List), at most `concurrency`
// blocks in memory at once. Every byte is proven (docs/api.md, "Verification"): each block carries
// its MD5 (transactional Content-MD5), so the service refuses a block damaged on the way; a Put Blob's
// answer says the MD5 the service computed over what it received, which must be the MD5 sent. The
// whole-object MD5 is computed on the way (on the hashing thread) and stored as the blob's Content-MD5
// on commit (Azure sets it by itself only for single-request uploads). Nothing is committed until the body has
// ended at its declared size, so a failed write leaves no blob behind: there is no call that drops
// uncommitted blocks, the service drops them after 7 days. A staged upload can be continued by another
// process (docs/engine.md, "Resumption"): Get Block List says which blocks are still staged, and the
// whole-object MD5 is computed again over the bytes of those blocks, read again from the source.
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-list
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlockBlobClient } from '@azure/storage-blob';
import { FerryError, invalid } from '../../errors.js';
import type { ResumableUpload, UploadedPart, UploadLimits, WriteOptions } from '../contract.js';
import { PartReader, readFirst, uploadParts } from '../shared/chunks.js';
import { digestOf, ThreadedHash } from '../shared/hash-thread.js';
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
  /**
   * The largest block ferry reads into memory (largestPart() of the transfer memory budget); absent:
   * Azure's own limit. A body that would need larger blocks is refused before anything is read.
   */
  largestBlock?: number;
}

/** The largest block an upload may use: Azure's limit, or the most ferry holds in memory. */
function largestBlock(tuning: UploadTuning): number {
  return Math.min(MAX_BLOCK_SIZE, tuning.largestBlock ?? MAX_BLOCK_SIZE);
}

export function uploadLimits(tuning: UploadTuning): UploadLimits {
  return {
    minPartSize: tuning.partSize,
    maxPartSize: largestBlock(tuning),
    maxParts: MAX_BLOCKS,
    singleRequestMax: tuning.partSize,
  };
}

/**
 * The block size for a body: the configured one, grown (in whole MiB) so 50,000 blocks hold `size`.
 * A body of known size under four blocks is cut in four (whole MiB, at least 1 MiB): while many uploads
 * run, each holds one block at a time (uploadParts), so an 8 MiB object holds 2 MiB rather than 4
 * (docs/performance.md, "Memory").
 */
export function blockSizeFor(size: number | undefined, tuning: UploadTuning): number {
  if (size === undefined) return tuning.partSize;
  if (size > MAX_BLOB_SIZE) throw invalid(`azureblob: ${size} bytes is more than a block blob can hold`);
  const needed = Math.ceil(size / MAX_BLOCKS / MiB) * MiB;
  const largest = largestBlock(tuning);
  if (needed > largest) {
    throw invalid(
      `azureblob: ${size} bytes needs blocks of ${needed} bytes, more than ferry holds in memory at once (${largest} bytes: FERRY_TRANSFER_MEMORY)`,
    );
  }
  const quarter = Math.max(MiB, Math.ceil(size / 4 / MiB) * MiB);
  return Math.max(Math.min(tuning.partSize, quarter), needed);
}

export interface UploadResult {
  size: number;
  md5: Buffer;
  /** Whether the service checked or reported an MD5 of every byte it received (docs/api.md, "Verification"). */
  proven: boolean;
}

/** Why the service's MD5 of what it received is not the MD5 sent; undefined when it is (or was not said). */
function damaged(reported: Uint8Array | undefined, sent: Buffer, what: string): FerryError | undefined {
  if (reported === undefined || Buffer.from(reported).equals(sent)) return undefined;
  return new FerryError(
    'transient',
    `azureblob: ${what}: the service received bytes whose MD5 (${Buffer.from(reported).toString('hex')}) is not that of the bytes sent (${sent.toString('hex')})`,
  );
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
  const { data: first, release: firstRelease } = await readFirst(
    reader,
    partSize,
    memory,
    options.signal,
    options.memoryWait,
  );
  let parts = false; // from here on uploadParts() gives the first part's budget back
  try {
    parts = !(await reader.atEnd());
    if (!parts) {
      reader.assertComplete();
      // The body has ended: the hashes it checked on the way are those of `first`.
      const known = options.bodyHashes?.md5;
      const md5 = known === undefined ? await digestOf('md5', first) : Buffer.from(known, 'hex');
      // No MD5 goes with a Put Blob (the SDK's upload() sends no Content-MD5): the service computes
      // the blob's over what it received and answers it, and it must be the one sent.
      const answer = await client.upload(first, first.length, {
        ...(options.mimeType ? { blobHTTPHeaders: { blobContentType: options.mimeType } } : {}),
        ...abortable(options.signal),
      });
      const failure = damaged(answer.contentMD5, md5, 'Put Blob');
      if (failure !== undefined) {
        // The blob holds other bytes than the source's: it goes, and the write is tried again.
        await client.deleteIfExists(abortable(options.signal)).catch(() => undefined);
        throw failure;
      }
      options.onProgress?.(first.length);
      return { size: first.length, md5, proven: answer.contentMD5 !== undefined };
    }
  } finally {
    if (!parts) firstRelease();
  }

  const upload = beginBlocks(options.size, tuning);
  return uploadBlocks(client, reader, { ...options, upload, done: [], first, firstRelease }, tuning, memory);
}

/** A new staged-block upload: block ids carry a random prefix, so they never meet another upload's. */
export function beginBlocks(size: number | undefined, tuning: UploadTuning): ResumableUpload {
  return { uploadId: randomBytes(6).toString('hex'), partSize: blockSizeFor(size, tuning) };
}

/**
 * Of the recorded blocks, those still staged (Get Block List, uncommitted) with the same size, and the
 * upload's other staged blocks that were never recorded; undefined when none of the upload's blocks is left: the blob was committed meanwhile, or the service
 * dropped the uncommitted blocks (after 7 days).
 * https://learn.microsoft.com/en-us/rest/api/storageservices/get-block-list
 */
export async function stagedBlocks(
  client: BlockBlobClient,
  upload: ResumableUpload,
  parts: readonly UploadedPart[],
  signal: AbortSignal | undefined,
): Promise<UploadedPart[] | undefined> {
  let staged: Map<string, number>;
  try {
    const list = await client.getBlockList('uncommitted', abortable(signal));
    staged = new Map((list.uncommittedBlocks ?? []).map((block) => [block.name, block.size]));
  } catch (err) {
    // No blob and no staged blocks: the service knows nothing of the upload.
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
  const held = parts.filter(
    (part) => part.tag === blockId(upload, part.index) && staged.get(part.tag) === part.size,
  );
  if (held.length === 0 && parts.length > 0) return undefined;
  // Blocks the service staged for this upload whose checkpoint was not written before the worker died
  // (acknowledged, then the process was killed): Put Block is all or nothing and the ids are this
  // upload's own, so they are as good as recorded ones. The caller keeps only blocks of the size their
  // place in the object gives.
  const recorded = new Set(held.map((part) => part.index));
  const prefix = `ferry-${upload.uploadId}-`;
  for (const [name, size] of staged) {
    const decoded = Buffer.from(name, 'base64').toString();
    if (!decoded.startsWith(prefix)) continue;
    const index = Number(decoded.slice(prefix.length));
    if (!Number.isSafeInteger(index) || recorded.has(index) || blockId(upload, index) !== name) continue;
    held.push({ index, tag: name, size });
  }
  return held.sort((a, b) => a.index - b.index);
}

export interface BlockUploadOptions extends WriteOptions {
  upload: ResumableUpload;
  /** Blocks already staged (from index 0 on); the reader gives the bytes after them. */
  done: readonly UploadedPart[];
  /** Blocks further on that are still staged: hashed from the reader but not staged again. */
  kept?: readonly UploadedPart[] | undefined;
  first?: Buffer;
  /** Gives the first part's share of the memory budget back (uploadParts calls it once it is sent). */
  firstRelease?: () => void;
  onPart?: (part: UploadedPart) => Promise<void>;
  /** The bytes the done blocks hold, for the whole-object MD5. */
  prefix?: () => Promise<Readable>;
}

/** Stages every remaining block and commits the list; the MD5 of the whole object goes in as Content-MD5. */
export async function uploadBlocks(
  client: BlockBlobClient,
  reader: PartReader,
  options: BlockUploadOptions,
  tuning: UploadTuning,
  memory?: MemoryBudget,
): Promise<UploadResult> {
  const { upload, done } = options;
  const before = done.reduce((n, part) => n + part.size, 0);
  // Hashed on the hashing thread, beside the transfer: in the event loop, MD5 alone took a quarter
  // of a large copy's time. Not at all when the body checks its own MD5 on the way (bodyHashes): it
  // is the whole object's once the body has ended, which uploadParts waits for.
  const known = before === 0 ? options.bodyHashes?.md5 : undefined;
  const hash = known === undefined ? new ThreadedHash('md5') : undefined;
  const blockIds = done.map((part) => part.tag);
  const kept = new Map((options.kept ?? []).map((part) => [part.index, part]));
  let size: number;
  try {
    if (before > 0) {
      if (options.prefix === undefined) throw invalid('azureblob: a resumed upload needs the bytes it holds');
      if (hash !== undefined) await hashAll(hash, await options.prefix(), before);
    }
    ({ size } = await uploadParts({
      reader,
      partSize: upload.partSize,
      concurrency: tuning.concurrency,
      ...(options.first === undefined ? {} : { first: options.first }),
      ...(options.firstRelease === undefined ? {} : { firstRelease: options.firstRelease }),
      memory,
      memoryWait: options.memoryWait,
      maxParts: MAX_BLOCKS - done.length,
      signal: options.signal,
      onProgress: (bytes) => options.onProgress?.(before + bytes),
      uploadPart: async ({ index, data }) => {
        // Runs in part order: the running hash and the block list stay in object order.
        const hashed = hash?.update(data);
        const at = done.length + index;
        const id = blockId(upload, at);
        blockIds[at] = id;
        const held = kept.get(at);
        if (held !== undefined && held.tag === id && held.size === data.length) {
          await hashed;
          return;
        }
        // The block's own MD5, sent with it: the service refuses a block that arrives otherwise. The
        // part's buffer is reused once both hashes and the upload are done with it.
        const md5 = await digestOf('md5', data);
        const [answer] = await Promise.all([
          client.stageBlock(id, data, data.length, {
            transactionalContentMD5: md5,
            ...abortable(options.signal),
          }),
          hashed,
        ]);
        const failure = damaged(answer.contentMD5, md5, `Put Block ${at}`);
        if (failure !== undefined) throw failure;
        await options.onPart?.({ index: at, tag: id, size: data.length });
      },
    }));
  } catch (err) {
    options.firstRelease?.(); // failed before uploadParts took it over (it gives it back once)
    hash?.discard();
    throw err;
  }
  const md5 = hash === undefined ? Buffer.from(known as string, 'hex') : await hash.digest();
  const headers = {
    blobContentMD5: md5,
    ...(options.mimeType ? { blobContentType: options.mimeType } : {}),
  };
  await client.commitBlockList(blockIds, { blobHTTPHeaders: headers, ...abortable(options.signal) });
  // Every block was sent with its MD5, which the service checks before it stages the block (Put
  // Block, "Request headers": Content-MD5); those of an earlier attempt were too.
  return { size: before + size, md5, proven: true };
}

/** Feeds exactly `length` bytes of `body` to the hash; fewer or more is a source that changed. */
async function hashAll(hash: ThreadedHash, body: Readable, length: number): Promise<void> {
  let seen = 0;
  for await (const chunk of body) {
    const buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    seen += buf.length;
    if (seen > length) break;
    await hash.update(buf);
  }
  if (seen !== length) {
    body.destroy();
    throw new FerryError('transient', `azureblob: the source gave ${seen} bytes of the ${length} uploaded`);
  }
}

/** Block ids must all have the same length within a blob: the upload's prefix and a fixed-width counter, base64. */
function blockId(upload: ResumableUpload, index: number): string {
  return Buffer.from(`ferry-${upload.uploadId}-${String(index).padStart(6, '0')}`).toString('base64');
}
