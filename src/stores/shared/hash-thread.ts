// Whole-object hashes computed on a thread of their own. MD5 over a large upload costs the event loop
// about as much as moving the bytes does (docs/performance.md, bench/transfer); on another thread it
// runs beside the transfer. One thread serves every hash of the process: started on first use, held
// only while a digest is awaited, so it never keeps the process alive by itself.
//
// Bytes in a SharedArrayBuffer (the part buffers of uploadParts) reach the thread without a copy; the
// promise update() returns settles once they are hashed, and the caller must not refill the buffer
// before that. Other bytes are copied into slabs of shared memory taken from one pool of the process
// (SLAB_BYTES each), and a slab goes back to the pool once the thread says it has hashed it: the same
// few slabs carry every hash's bytes, so hashing leaves no garbage behind. (A fresh copy per chunk,
// transferred to the thread, was garbage in the thread's heap once hashed, freed only when that heap
// was next collected: 140 MiB of RSS for four 512 MiB streams, docs/performance.md.) The slabs of one
// hash that the thread has not hashed yet stay within HASH_BYTES_IN_FLIGHT: past it, update() waits
// for the thread, and so does the stream that awaits it. A thread that falls behind (it runs at a
// lower priority, and a busy machine may starve it) slows the uploads it hashes instead of piling up
// copies.
//
// Besides node:crypto's digests, the thread computes the hashes providers report that node:crypto has
// not: CRC32C (GCS), Dropbox's content hash and OneDrive's QuickXorHash, each the bytes the provider
// shows (big-endian CRC32C, the 32 SHA-256 bytes, the 20 QuickXorHash bytes).
import { Worker } from 'node:worker_threads';
import { FerryError } from '../../errors.js';
import type { HashKind } from '../contract.js';

export type ThreadHashAlgorithm = HashKind;

type Request =
  | { op: 'update'; id: number; algorithm: ThreadHashAlgorithm; data: Uint8Array; ack: boolean }
  | { op: 'digest'; id: number; algorithm: ThreadHashAlgorithm }
  | { op: 'drop'; id: number }
  | { op: 'hold'; id: number; gate: Int32Array };

type Reply = { id: number; op: 'ack' } | { id: number; op: 'digest'; digest: Uint8Array };

/**
 * The hashing thread's nice value on Linux. Hashing is background work that keeps pace with uploads
 * waiting on the network; at a lower priority it yields a busy machine's cores to the event loop (and
 * to whatever else runs there) instead of competing with them (docs/performance.md, bench/transfer (c)).
 */
export const HASH_THREAD_NICE = 10;

/**
 * The most bytes of copies one hash has handed to the thread and the thread has not hashed yet: enough
 * that a thread a few scheduler slices behind does not stop the stream, and less than one part of an
 * upload, so the copies of every running hash stay small beside what the uploads themselves hold
 * (docs/performance.md, "The hashing thread's bytes in flight"). An update larger than this is handed
 * over in pieces of at most this size.
 */
export const HASH_BYTES_IN_FLIGHT = 4 * 1024 * 1024;

/**
 * The bytes of one slab: copies are handed to the thread a slab at a time, so a reply (a message to the
 * event loop) comes once per SLAB_BYTES, not once per chunk.
 */
export const SLAB_BYTES = 512 * 1024;

/** Slabs kept for reuse once hashed, at most: beyond these, a slab given back is left to the collector. */
const POOL_SLABS = 32;

const pool: SharedArrayBuffer[] = [];

function takeSlab(): Uint8Array {
  return new Uint8Array(pool.pop() ?? new SharedArrayBuffer(SLAB_BYTES));
}

function giveBack(slab: Uint8Array): void {
  if (pool.length < POOL_SLABS) pool.push(slab.buffer as SharedArrayBuffer);
}

// CommonJS, evaluated by the thread: the state is one hash (update, digest) per stream id. Linux gives each thread its
// own nice value, set through its thread id (/proc/thread-self names it); its priority is only ever
// lowered, and elsewhere it stays as it is.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  const os = require('node:os');
  if (os.getPriority(tid) < ${HASH_THREAD_NICE}) os.setPriority(tid, ${HASH_THREAD_NICE});
} catch {}
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78, RFC 3720 B.4), a byte at a time from a table.
const CRC32C_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  CRC32C_TABLE[n] = c;
}
const crc32c = () => {
  let crc = ~0;
  return {
    update(data) {
      for (let i = 0; i < data.length; i++) crc = CRC32C_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
    },
    digest() {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(~crc >>> 0);
      return out;
    },
  };
};
// Dropbox's content hash (https://www.dropbox.com/developers/reference/content-hash): the SHA-256 of
// the SHA-256s of each 4 MiB block.
const DROPBOX_BLOCK = 4 * 1024 * 1024;
const dropbox = () => {
  const overall = createHash('sha256');
  let block = createHash('sha256');
  let inBlock = 0;
  const flush = () => {
    overall.update(block.digest());
    block = createHash('sha256');
    inBlock = 0;
  };
  return {
    update(data) {
      for (let at = 0; at < data.length; ) {
        const take = Math.min(DROPBOX_BLOCK - inBlock, data.length - at);
        block.update(data.subarray(at, at + take));
        inBlock += take;
        at += take;
        if (inBlock === DROPBOX_BLOCK) flush();
      }
    },
    digest() {
      if (inBlock > 0) flush();
      return overall.digest();
    },
  };
};
// QuickXorHash (https://learn.microsoft.com/onedrive/developer/code-snippets/quickxorhash): byte i is
// XORed into a 160-bit register at bit (11 * i) mod 160, wrapping; the length, 64-bit little-endian,
// is XORed into its last 8 bytes. Bytes 160 apart land on the same bits, so the bytes are first folded
// into 160 lanes (one XOR each) and the lanes shifted into the register only at the end.
const quickxor = () => {
  const lanes = new Uint8Array(160);
  let at = 0;
  let length = 0n;
  return {
    update(data) {
      for (let i = 0; i < data.length; i++) {
        lanes[at] ^= data[i];
        at = at === 159 ? 0 : at + 1;
      }
      length += BigInt(data.length);
    },
    digest() {
      const out = Buffer.alloc(20);
      for (let lane = 0; lane < 160; lane++) {
        const byte = lanes[lane];
        if (byte === 0) continue;
        const shift = (lane * 11) % 160;
        const index = shift >> 3;
        const bit = shift & 7;
        out[index] ^= (byte << bit) & 0xff;
        if (bit > 0) out[(index + 1) % 20] ^= byte >> (8 - bit);
      }
      const tail = Buffer.alloc(8);
      tail.writeBigUInt64LE(length);
      for (let i = 0; i < 8; i++) out[12 + i] ^= tail[i];
      return out;
    },
  };
};
const make = (algorithm) =>
  algorithm === 'crc32c' ? crc32c()
  : algorithm === 'dropbox' ? dropbox()
  : algorithm === 'quickxor' ? quickxor()
  : createHash(algorithm);
const hashes = new Map();
const hashOf = (m) => {
  let h = hashes.get(m.id);
  if (!h) hashes.set(m.id, (h = make(m.algorithm)));
  return h;
};
parentPort.on('message', (m) => {
  if (m.op === 'update') {
    hashOf(m).update(m.data);
    if (m.ack) parentPort.postMessage({ id: m.id, op: 'ack' });
  } else if (m.op === 'digest') {
    const digest = hashOf(m).digest();
    hashes.delete(m.id);
    parentPort.postMessage({ id: m.id, op: 'digest', digest });
  } else if (m.op === 'drop') {
    hashes.delete(m.id);
  } else if (m.op === 'hold') {
    Atomics.wait(m.gate, 0, 0);
  }
});
`;

interface Waiter {
  resolve(reply: Reply): void;
  reject(err: Error): void;
}

class HashThread {
  readonly #worker: Worker;
  /** Settles once the thread runs (for tests: hashThreadOnline). */
  readonly online: Promise<void>;
  /** Per stream id, the replies awaited, in the order they will come. */
  readonly #waiting = new Map<number, Waiter[]>();
  #waiters = 0;
  #failure: Error | undefined;

  constructor() {
    // No inherited flags (a TypeScript loader, say): the thread needs nothing but node:crypto.
    this.#worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [] });
    this.#worker.unref();
    // Node 20 forgets an unref() made before the thread is online: a thread started and never asked
    // anything (a stream canceled before its first byte) then kept the process alive for good.
    this.online = new Promise((resolve) =>
      this.#worker.once('online', () => {
        if (this.#waiters === 0) this.#worker.unref();
        resolve();
      }),
    );
    this.#worker.on('message', (reply: Reply) => {
      const queue = this.#waiting.get(reply.id);
      const waiter = queue?.shift();
      if (queue?.length === 0) this.#waiting.delete(reply.id);
      if (waiter) this.#settled(() => waiter.resolve(reply));
    });
    const fail = (err: Error) => {
      this.#failure ??= new FerryError('internal', `the hashing thread stopped: ${err.message}`, {
        cause: err,
      });
      if (current === this) current = undefined;
      for (const queue of this.#waiting.values()) for (const w of queue) w.reject(this.#failure);
      this.#waiting.clear();
      this.#waiters = 0;
      this.#worker.unref();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  }

  post(request: Request): void {
    if (this.#failure) throw this.#failure;
    this.#worker.postMessage(request);
  }

  /** Posts a request that the thread answers, and waits for the answer. */
  ask(request: Request): Promise<Reply> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise<Reply>((resolve, reject) => {
      const queue = this.#waiting.get(request.id) ?? [];
      queue.push({ resolve, reject });
      this.#waiting.set(request.id, queue);
      if (this.#waiters++ === 0) this.#worker.ref();
      this.#worker.postMessage(request);
    });
  }

  #settled(then: () => void): void {
    if (--this.#waiters === 0) this.#worker.unref();
    then();
  }
}

let current: HashThread | undefined;
let nextId = 0;

/** One update waiting its turn: handed to the thread in call order, when its bytes fit. */
interface Queued {
  /** What is left of it to hand over (a large update is copied a slab at a time). */
  data: Uint8Array;
  /** Shared memory: hashed in place, so neither copied nor counted; settled once hashed. */
  shared: boolean;
  settle: { resolve(): void; reject(err: Error): void };
}

/** One running hash, fed in order, whose work happens on the shared hashing thread. */
export class ThreadedHash {
  readonly #id = nextId++;
  readonly #algorithm: ThreadHashAlgorithm;
  // A stream stays with the thread it started on: a replacement thread would not have its bytes.
  readonly #thread: HashThread;
  readonly #queue: Queued[] = [];
  /** The slab being filled, and how much of it is; handed over when full, or at the digest. */
  #slab: Uint8Array | undefined;
  #filled = 0;
  /** Bytes in slabs handed to the thread and not yet hashed. */
  #handedOver = 0;
  #drained: Array<{ resolve(): void; reject(err: Error): void }> = [];
  #failure: Error | undefined;

  constructor(algorithm: ThreadHashAlgorithm) {
    this.#algorithm = algorithm;
    current ??= new HashThread();
    this.#thread = current;
  }

  /** Bytes copied for this hash that the thread has not hashed yet: at most HASH_BYTES_IN_FLIGHT. */
  get bytesInFlight(): number {
    return this.#handedOver + this.#filled;
  }

  /**
   * Adds `data`, after everything added before. The promise settles once the bytes are with the
   * thread: shared memory once hashed in place, anything else once copied, which waits while this
   * hash's copies not yet hashed would exceed HASH_BYTES_IN_FLIGHT. Do not change `data` before then.
   */
  update(data: Uint8Array): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (data.length === 0) return Promise.resolve();
    const shared = data.buffer instanceof SharedArrayBuffer;
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ data, shared, settle: { resolve, reject } });
      this.#pump();
    });
  }

  /** The digest of everything added; the hash cannot be used afterwards. */
  async digest(): Promise<Buffer> {
    if (this.#queue.length > 0) {
      await new Promise<void>((resolve, reject) => this.#drained.push({ resolve, reject }));
    }
    if (this.#failure) throw this.#failure;
    this.#handOver();
    const reply = await this.#thread.ask({ op: 'digest', id: this.#id, algorithm: this.#algorithm });
    if (reply.op !== 'digest') throw new FerryError('internal', 'the hashing thread answered out of order');
    return Buffer.from(reply.digest.buffer, reply.digest.byteOffset, reply.digest.byteLength);
  }

  /**
   * Forgets the hash (an upload that failed), freeing its state on the thread. Updates still waiting
   * their turn are dropped, their promises rejected; slabs already handed over go back to the pool as
   * the thread reaches them.
   */
  discard(): void {
    this.#stop(new FerryError('internal', 'the hash was discarded'));
    if (this.#slab) giveBack(this.#slab);
    this.#slab = undefined;
    this.#filled = 0;
    try {
      this.#thread.post({ op: 'drop', id: this.#id });
    } catch {
      // The thread is gone, and the state with it.
    }
  }

  /** Hands queued updates to the thread, in order: shared memory as it is, the rest copied into slabs while they fit. */
  #pump(): void {
    const id = this.#id;
    const algorithm = this.#algorithm;
    while (this.#failure === undefined) {
      const next = this.#queue[0];
      if (next === undefined) {
        for (const waiter of this.#drained.splice(0)) waiter.resolve();
        return;
      }
      if (next.shared) {
        // In order after the bytes copied before it.
        this.#handOver();
        this.#queue.shift();
        this.#thread.ask({ op: 'update', id, algorithm, data: next.data, ack: true }).then(
          () => next.settle.resolve(),
          (err: Error) => this.#stop(err, next),
        );
        continue;
      }
      if (this.#slab === undefined) {
        if (this.#handedOver + SLAB_BYTES > HASH_BYTES_IN_FLIGHT) return; // a slab's reply pumps again
        this.#slab = takeSlab();
        this.#filled = 0;
      }
      const take = Math.min(next.data.length, SLAB_BYTES - this.#filled);
      this.#slab.set(next.data.subarray(0, take), this.#filled);
      this.#filled += take;
      next.data = next.data.subarray(take);
      if (this.#filled === SLAB_BYTES) this.#handOver();
      if (next.data.length === 0) {
        this.#queue.shift();
        next.settle.resolve();
      }
    }
  }

  /** Hands the slab being filled to the thread; it goes back to the pool once hashed. */
  #handOver(): void {
    const slab = this.#slab;
    const length = this.#filled;
    this.#slab = undefined;
    this.#filled = 0;
    if (slab === undefined) return;
    if (length === 0) {
      giveBack(slab);
      return;
    }
    this.#handedOver += length;
    this.#thread
      .ask({
        op: 'update',
        id: this.#id,
        algorithm: this.#algorithm,
        data: slab.subarray(0, length),
        ack: true,
      })
      .then(
        () => {
          giveBack(slab);
          this.#handedOver -= length;
          this.#pump();
        },
        (err: Error) => this.#stop(err),
      );
  }

  /** Fails everything waiting (and `also`, an update already taken from the queue). */
  #stop(err: Error, also?: Queued): void {
    this.#failure ??= err;
    also?.settle.reject(this.#failure);
    for (const queued of this.#queue.splice(0)) queued.settle.reject(this.#failure);
    for (const waiter of this.#drained.splice(0)) waiter.reject(this.#failure);
  }
}

/**
 * Holds the hashing thread until the returned function is called: what a thread starved of the CPU
 * looks like to the streams it hashes. For tests of the bound on bytes in flight.
 */
export function holdHashThread(): () => void {
  current ??= new HashThread();
  const gate = new Int32Array(new SharedArrayBuffer(4));
  current.post({ op: 'hold', id: -1, gate });
  return () => {
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
  };
}

/** Settles once the current hashing thread runs: for tests of what an idle thread holds. */
export function hashThreadOnline(): Promise<void> {
  current ??= new HashThread();
  return current.online;
}

/**
 * The digest of one buffer (a part, a single request's body), computed on the hashing thread. Shared
 * memory is hashed in place: the buffer must not change until this settles.
 */
export async function digestOf(algorithm: ThreadHashAlgorithm, data: Uint8Array): Promise<Buffer> {
  const hash = new ThreadedHash(algorithm);
  try {
    await hash.update(data);
  } catch (err) {
    hash.discard();
    throw err;
  }
  return hash.digest();
}
