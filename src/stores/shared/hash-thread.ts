// Whole-object hashes computed on a thread of their own. MD5 over a large upload costs the event loop
// about as much as moving the bytes does (docs/performance.md, bench/transfer); on another thread it
// runs beside the transfer. One thread serves every hash of the process: started on first use, held
// only while a digest is awaited, so it never keeps the process alive by itself.
//
// Bytes in a SharedArrayBuffer (the part buffers of uploadParts) reach the thread without a copy; the
// promise update() returns settles once they are hashed, and the caller must not refill the buffer
// before that. Other bytes are copied and handed over at once.
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
  | { op: 'drop'; id: number };

type Reply = { id: number; op: 'ack' } | { id: number; op: 'digest'; digest: Uint8Array };

/**
 * The hashing thread's nice value on Linux. Hashing is background work that keeps pace with uploads
 * waiting on the network; at a lower priority it yields a busy machine's cores to the event loop (and
 * to whatever else runs there) instead of competing with them (docs/performance.md, bench/transfer (c)).
 */
export const HASH_THREAD_NICE = 10;

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
  }
});
`;

interface Waiter {
  resolve(reply: Reply): void;
  reject(err: Error): void;
}

class HashThread {
  readonly #worker: Worker;
  /** Per stream id, the replies awaited, in the order they will come. */
  readonly #waiting = new Map<number, Waiter[]>();
  #waiters = 0;
  #failure: Error | undefined;

  constructor() {
    // No inherited flags (a TypeScript loader, say): the thread needs nothing but node:crypto.
    this.#worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [] });
    this.#worker.unref();
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

  post(request: Request, transfer: ArrayBuffer[] = []): void {
    if (this.#failure) throw this.#failure;
    this.#worker.postMessage(request, transfer);
  }

  /** Posts a request that the thread answers, and waits for the answer. */
  ask(request: Request & { id: number }): Promise<Reply> {
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

/** One running hash, fed in order, whose work happens on the shared hashing thread. */
export class ThreadedHash {
  readonly #id = nextId++;
  readonly #algorithm: ThreadHashAlgorithm;
  // A stream stays with the thread it started on: a replacement thread would not have its bytes.
  readonly #thread: HashThread;

  constructor(algorithm: ThreadHashAlgorithm) {
    this.#algorithm = algorithm;
    current ??= new HashThread();
    this.#thread = current;
  }

  /**
   * Adds `data`. Shared memory is hashed in place: wait for the promise before changing it. Anything
   * else is copied before this returns.
   */
  update(data: Uint8Array): Promise<void> {
    const id = this.#id;
    const algorithm = this.#algorithm;
    if (data.buffer instanceof SharedArrayBuffer) {
      return this.#thread.ask({ op: 'update', id, algorithm, data, ack: true }).then(() => undefined);
    }
    const copy = new Uint8Array(data.length);
    copy.set(data);
    try {
      this.#thread.post({ op: 'update', id, algorithm, data: copy, ack: false }, [copy.buffer]);
    } catch (err) {
      return Promise.reject(err);
    }
    return Promise.resolve();
  }

  /** The digest of everything added; the hash cannot be used afterwards. */
  async digest(): Promise<Buffer> {
    const reply = await this.#thread.ask({ op: 'digest', id: this.#id, algorithm: this.#algorithm });
    if (reply.op !== 'digest') throw new FerryError('internal', 'the hashing thread answered out of order');
    return Buffer.from(reply.digest.buffer, reply.digest.byteOffset, reply.digest.byteLength);
  }

  /** Forgets the hash (an upload that failed), freeing its state on the thread. */
  discard(): void {
    try {
      this.#thread.post({ op: 'drop', id: this.#id });
    } catch {
      // The thread is gone, and the state with it.
    }
  }
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
