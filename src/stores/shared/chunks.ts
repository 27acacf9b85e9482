// Chunked uploads with bounded memory, for providers whose large-file uploads are sessions of parts
// (Dropbox upload sessions, Drive resumable uploads, Graph upload sessions, Box chunked uploads).
//
// PartReader cuts a Readable into parts of an exact size, holding at most one part plus one stream
// chunk. uploadParts() drives a session: after rclone's lib/multipart it takes a concurrency permit
// BEFORE reading the next part, so at most `concurrency` parts are in memory at once; on the first
// failure it stops reading, lets the parts in flight settle, and rethrows (the provider code aborts
// its session). The provider callback does the actual part request.
import type { Readable } from 'node:stream';
import { invalid } from '../../errors.js';
import { Semaphore } from '../../util/semaphore.js';
import { largestPart, type MemoryBudget, type MemoryWait, type Release } from './memory.js';

export class PartReader {
  readonly #iterator: AsyncIterator<unknown>;
  readonly #expectedSize: number | undefined;
  #carry: Buffer | undefined;
  #done = false;
  #bytesRead = 0;

  /** `expectedSize`, when given, is enforced: a longer or shorter body fails with invalid. */
  constructor(body: Readable, expectedSize?: number) {
    this.#iterator = body[Symbol.asyncIterator]();
    this.#expectedSize = expectedSize;
  }

  /** Bytes handed out by read() so far. */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  /** Bytes still to come by the declared size; undefined when no size was declared. */
  get remaining(): number | undefined {
    return this.#expectedSize === undefined ? undefined : Math.max(0, this.#expectedSize - this.#bytesRead);
  }

  /**
   * The next `size` bytes, or fewer only when the body ends (an empty buffer at the end). With `into`
   * (at least `size` bytes) they are copied there and a view of it is returned, so a caller can reuse
   * its buffers instead of allocating a new one for every part.
   */
  async read(size: number, into?: Buffer): Promise<Buffer> {
    const parts: Buffer[] = [];
    let length = 0;
    while (length < size) {
      const chunk = this.#carry ?? (await this.#pull());
      this.#carry = undefined;
      if (chunk === undefined) break;
      const want = size - length;
      const piece = chunk.length > want ? chunk.subarray(0, want) : chunk;
      if (chunk.length > want) this.#carry = chunk.subarray(want);
      if (into) piece.copy(into, length);
      else parts.push(piece);
      length += piece.length;
    }
    this.#bytesRead += length;
    if (this.#expectedSize !== undefined && this.#bytesRead > this.#expectedSize) {
      throw invalid(`the body is longer than its declared size of ${this.#expectedSize} bytes`);
    }
    if (into) return into.subarray(0, length);
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
  }

  /** True when the body has no more bytes (reads ahead by at most one stream chunk). */
  async atEnd(): Promise<boolean> {
    if (this.#carry === undefined) this.#carry = await this.#pull();
    return this.#carry === undefined;
  }

  /** Throws invalid when the body ended at another length than the declared size. */
  assertComplete(): void {
    if (this.#expectedSize !== undefined && this.#bytesRead !== this.#expectedSize) {
      throw invalid(`the body was ${this.#bytesRead} bytes, not its declared size of ${this.#expectedSize}`);
    }
  }

  /** Stops reading and destroys the source stream. */
  async cancel(): Promise<void> {
    this.#done = true;
    this.#carry = undefined;
    await this.#iterator.return?.();
  }

  async #pull(): Promise<Buffer | undefined> {
    while (!this.#done) {
      const next = await this.#iterator.next();
      if (next.done) {
        this.#done = true;
        return undefined;
      }
      const value = next.value;
      const chunk = Buffer.isBuffer(value) ? value : Buffer.from(value as string | Uint8Array);
      if (chunk.length > 0) return chunk;
    }
    return undefined;
  }
}

/** Reads the whole body into memory, refusing more than `limit` bytes. For small single requests. */
export async function readAll(reader: PartReader, limit: number): Promise<Buffer> {
  const data = await reader.read(limit);
  if (!(await reader.atEnd())) throw invalid(`the body is larger than ${limit} bytes`);
  reader.assertComplete();
  return data;
}

export interface Part {
  /** 0-based. */
  index: number;
  /** Byte offset of the part in the object. */
  offset: number;
  data: Buffer;
}

export interface UploadPartsOptions {
  reader: PartReader;
  partSize: number;
  /** Parts uploading at once; memory is at most concurrency x partSize. Default 1 (in order). */
  concurrency?: number;
  /** A part already read from `reader` (e.g. while choosing between a single request and a session). */
  first?: Buffer;
  /** Gives back the budget `first` took (readFirst()); called once its upload settles. */
  firstRelease?: Release | undefined;
  /**
   * The process's transfer memory (FERRY_TRANSFER_MEMORY): each part takes its size from it before it
   * is read and gives it back once sent. Absent: parts are bounded by `concurrency` alone.
   */
  memory?: MemoryBudget | undefined;
  /** What else ends a part's wait for room in `memory` (an upload's idle deadline, shutdown). */
  memoryWait?: MemoryWait | undefined;
  /** More parts than this fail with invalid before the extra part is sent. */
  maxParts?: number;
  signal?: AbortSignal | undefined;
  /**
   * Uploads one part. Called in part order; with concurrency > 1 calls overlap, but the synchronous
   * start of each call still runs in order (so a running whole-object hash can be updated there).
   * `part.data` is lent: its buffer is refilled with a later part once the returned promise settles.
   */
  uploadPart: (part: Part) => Promise<void>;
  /** Cumulative bytes of completed parts. */
  onProgress?: ((bytesDone: number) => void) | undefined;
}

// Part buffers go back to a pool when their upload settles and are refilled with a later part, of
// this upload or another, rather than a new block for every part: the garbage collector has none to
// chase, and many uploads of a few parts each (a bulk job of 8 MiB objects) share a few blocks. They
// are shared memory, so a ThreadedHash (hash-thread.ts) reads them without a copy. A part shorter
// than the part size (the end of a body of known size) gets a block of its own size, not pooled: a
// 5 MiB object in 4 MiB parts holds 5 MiB, not 8.
//
// The pool keeps up to the transfer memory budget (with one, else 64 MiB): the budget already bounds
// the blocks in use, so a block given back is kept rather than left to the collector, which frees
// shared memory only at a major collection that the heap's own size does not prompt (docs/
// performance.md, "Memory": with a pool smaller than the budget, the blocks it dropped piled up).
const POOL_BYTES = 64 * 1024 * 1024;
const pool = new Map<number, Buffer[]>();
let pooledBytes = 0;

function takeBlock(size: number): Buffer {
  const block = pool.get(size)?.pop();
  if (block === undefined) return Buffer.from(new SharedArrayBuffer(size));
  pooledBytes -= size;
  return block;
}

function poolLimit(memory: MemoryBudget | undefined): number {
  return Math.max(POOL_BYTES, memory?.capacity ?? 0);
}

/** Keeps an idle full-size block for the next part, up to `limit` bytes in all; the rest go to the collector. */
function giveBlock(block: Buffer, partSize: number, limit: number): void {
  if (block.length !== partSize || pooledBytes + block.length > limit) return;
  const idle = pool.get(block.length) ?? [];
  idle.push(block);
  pool.set(block.length, idle);
  pooledBytes += block.length;
}

/**
 * The budget for one more part of an upload. Its only part in flight waits its turn like any other
 * upload's. A further one would only make this one upload faster, so it is taken only while the
 * process holds little: at most EXTRA_PARTS_SHARE of the budget for an upload with at least a full
 * window (`concurrency` parts) still to read, at most SHORT_EXTRA_PARTS_SHARE for a shorter one, whose
 * parts the other uploads running beside it keep the connection busy for as well. Otherwise the upload
 * waits for one of its own parts to be sent and goes on one part at a time. Many uploads at once then
 * hold about one part each instead of `concurrency` parts each, while a long upload, or a short one on
 * its own, still sends several parts at once (docs/performance.md, "Memory").
 */
async function partMemory(
  memory: MemoryBudget,
  size: number,
  long: boolean,
  inFlight: ReadonlySet<Promise<void>>,
  signal: AbortSignal | undefined,
  wait: MemoryWait | undefined,
): Promise<Release> {
  const below = memory.capacity * (long ? EXTRA_PARTS_SHARE : SHORT_EXTRA_PARTS_SHARE);
  for (;;) {
    if (inFlight.size === 0) return memory.acquire(size, signal, wait);
    const extra = memory.tryAcquire(size, below);
    if (extra) return extra;
    await Promise.race(inFlight); // the tasks never reject: they record a failure instead
    signal?.throwIfAborted();
  }
}

/**
 * The share of the transfer memory budget below which a long upload may have more than one part in
 * flight: with the default budget, 48 MiB, which a lone upload of 8 parts of 4 MiB stays within.
 */
export const EXTRA_PARTS_SHARE = 3 / 16;
/** The same for an upload with less than a window of parts left. */
export const SHORT_EXTRA_PARTS_SHARE = 1 / 16;

/**
 * Refuses a part size larger than ferry reads into memory (largestPart), before anything is taken
 * from the budget or allocated: the store chose it from a size it should have refused.
 */
function checkPartSize(partSize: number, memory: MemoryBudget | undefined): void {
  const largest = largestPart(memory);
  if (!Number.isSafeInteger(partSize) || partSize <= 0 || partSize > largest) {
    throw invalid(
      `a part of ${partSize} bytes is more than ferry holds in memory at once (${largest} bytes: FERRY_TRANSFER_MEMORY)`,
    );
  }
}

/** Reads and uploads every remaining part; resolves with the part count and total size. */
export async function uploadParts(options: UploadPartsOptions): Promise<{ parts: number; size: number }> {
  const { reader, partSize, signal, memory } = options;
  try {
    checkPartSize(partSize, memory);
  } catch (err) {
    options.firstRelease?.();
    throw err;
  }
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const permits = new Semaphore(concurrency);
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let first = options.first;
  let firstRelease = options.firstRelease;
  let index = 0;
  let offset = 0;
  let done = 0;

  while (failure === undefined) {
    const release = await permits.acquire(); // before reading: this is what bounds memory
    if (failure !== undefined) {
      release();
      break;
    }
    let data: Buffer;
    let block: Buffer | undefined;
    let held: Release | undefined;
    try {
      signal?.throwIfAborted();
      if (first) {
        data = first;
        held = firstRelease;
      } else {
        // The part's size: the part size, or what is left of a body of declared size (0 at its end:
        // the read then only checks that nothing more comes).
        const size = Math.min(partSize, reader.remaining ?? partSize);
        const long = (reader.remaining ?? Number.POSITIVE_INFINITY) >= concurrency * partSize;
        held = memory && (await partMemory(memory, size, long, inFlight, signal, options.memoryWait));
        if (failure !== undefined) throw (failure as { error: unknown }).error;
        if (size === 0) data = await reader.read(1);
        else {
          block = takeBlock(size);
          data = await reader.read(size, block);
        }
      }
      first = undefined;
      firstRelease = undefined;
      if (data.length > 0 && options.maxParts !== undefined && index >= options.maxParts) {
        throw invalid(`the object needs more than ${options.maxParts} parts of ${partSize} bytes`);
      }
    } catch (err) {
      held?.();
      release();
      failure = { error: err };
      break;
    }
    if (data.length === 0) {
      held?.();
      release();
      break;
    }
    const part: Part = { index, offset, data };
    index += 1;
    offset += data.length;
    let sending: Promise<void>;
    try {
      sending = options.uploadPart(part);
    } catch (err) {
      sending = Promise.reject(err); // thrown before its promise: settled below like any other failure
    }
    const task = sending
      .then(
        () => {
          done += part.data.length;
          options.onProgress?.(done);
        },
        (err: unknown) => {
          failure ??= { error: err };
        },
      )
      .finally(() => {
        inFlight.delete(task);
        if (block) giveBlock(block, partSize, poolLimit(memory));
        held?.();
        release();
      });
    inFlight.add(task);
  }
  await Promise.all(inFlight);
  firstRelease?.(); // a first part never sent (the loop failed before it)
  if (failure !== undefined) {
    await reader.cancel().catch(() => undefined);
    throw failure.error;
  }
  reader.assertComplete();
  return { parts: index, size: offset };
}

/**
 * Reads the first part of a body (up to `partSize`, fewer when it ends), after taking its size from
 * the budget: the part that decides between one request and a session of parts. Give `release` to
 * uploadParts() as `firstRelease`, or call it once a single request is sent: it gives back the budget
 * and the part's buffer.
 *
 * A full-size first part is read into a pooled block like every later part. Read into a buffer of its
 * own (the concatenation of the stream's chunks), every object of more than one part left a part-size
 * allocation to the C heap, which keeps the pages of freed ones (docs/performance.md, "Memory"). A
 * shorter one (the whole of a small object) is read as the stream gives it, mostly a single chunk.
 */
export async function readFirst(
  reader: PartReader,
  partSize: number,
  memory: MemoryBudget | undefined,
  signal?: AbortSignal,
  wait?: MemoryWait,
): Promise<{ data: Buffer; release: Release }> {
  checkPartSize(partSize, memory);
  const size = Math.min(partSize, reader.remaining ?? partSize);
  const held = (await memory?.acquire(size, signal, wait)) ?? (() => {});
  let block: Buffer | undefined;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (block) giveBlock(block, partSize, poolLimit(memory));
    held();
  };
  try {
    // Inside the try: whatever fails from here on gives the budget back.
    if (size === partSize && size > 0) block = takeBlock(partSize);
    return { data: await reader.read(partSize, block), release };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * An upload in one request when the body fits in `oneMax` (its declared size says so, or, undeclared,
 * the body ended within the first `oneMax` bytes), else in parts; `parts` gets those first bytes when
 * they were read. The reader is canceled when either fails.
 */
export async function oneRequestOrParts<T>(
  reader: PartReader,
  size: number | undefined,
  oneMax: number,
  one: (bytes: Buffer) => Promise<T>,
  parts: (first: Buffer | undefined) => Promise<T>,
): Promise<T> {
  try {
    if (size !== undefined && size <= oneMax) return await one(await readAll(reader, size));
    if (size !== undefined) return await parts(undefined);
    const first = await reader.read(oneMax);
    if (await reader.atEnd()) return await one(first);
    return await parts(first);
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
}
