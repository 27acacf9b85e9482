// The process's budget for transfer bytes held in memory (FERRY_TRANSFER_MEMORY): every part a store
// reads from a source before sending it takes its size from the budget first and gives it back when
// the part has been sent, so all transfers together hold at most the budget however many run at once.
// A part that does not fit waits (first come, first served) instead of growing the heap; its source
// stream is not read meanwhile, so backpressure reaches the source.
//
// The budget cannot deadlock: a part waits only before it is read, holding nothing, and a part that
// holds budget is already being sent and needs no more. No part is larger than the budget: a store
// chooses its part size no larger than largestPart() before it takes or allocates anything (a size
// it would need larger is refused), so the clamp below only guards a caller that forgot.
//
// Every taking is given back once, on every way out: the part sent, its upload failed, aborted, timed
// out or its key revoked (the stores release in `finally`; test/http/memory-budget.test.ts tries each).
// A wait is ended by the write's signal (a cancel, a client gone, a revoked key, a worker's shutdown
// deadline) and, for a caller that gives one, by a MemoryWait: a time limit (an upload's idle deadline)
// and a signal of its own (the HTTP server closing), so nothing waits on the budget without end.
import { constants } from 'node:buffer';
import { FerryError } from '../../errors.js';

export type Release = () => void;

/** What else ends a wait for room, besides the write's own signal. */
export interface MemoryWait {
  /** The longest a part may wait; past it the write fails with unavailable (503, Retry-After). */
  timeoutMs?: number | undefined;
  /** Ends the wait with its reason (the HTTP server closing: a wait must not hold shutdown). */
  signal?: AbortSignal | undefined;
}

/** What a write refused for want of room tells its caller to wait before trying again. */
export const MEMORY_RETRY_AFTER_SECONDS = 5;

const MiB = 1024 * 1024;

/**
 * The largest part ferry reads into memory: one that fits in the budget and in a Buffer (Node's
 * buffer.constants.MAX_LENGTH), in whole MiB, since stores grow their parts in whole MiB. A store
 * chooses no larger part, so a body that would need one is refused before anything is taken or
 * allocated (docs/api.md, "Files through ferry"). Without a budget, only the Buffer's limit holds.
 */
export function largestPart(memory: MemoryBudget | undefined): number {
  const bound = Math.min(memory?.capacity ?? Number.POSITIVE_INFINITY, constants.MAX_LENGTH);
  return Math.max(MiB, Math.floor(bound / MiB) * MiB);
}

export class MemoryBudget {
  readonly capacity: number;
  #used = 0;
  #peak = 0;
  readonly #waiting: Array<{ bytes: number; grant: () => void }> = [];

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new Error('the budget must be positive');
    this.capacity = capacity;
  }

  /** Bytes held now. */
  get used(): number {
    return this.#used;
  }

  /** The most held at once since the last resetPeak(). */
  get peak(): number {
    return this.#peak;
  }

  resetPeak(): void {
    this.#peak = this.#used;
  }

  /** Parts waiting for room now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Takes `bytes` (capped at the capacity), waiting in line for room; resolves with its release. The
   * wait ends, rejecting, when `signal` aborts or `wait` says so; the part then leaves the line
   * holding nothing.
   */
  async acquire(bytes: number, signal?: AbortSignal, wait: MemoryWait = {}): Promise<Release> {
    const size = this.#clamp(bytes);
    signal?.throwIfAborted();
    if (this.#waiting.length === 0 && this.#fits(size)) {
      this.#take(size);
      return this.#releaser(size);
    }
    wait.signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        wait.signal?.removeEventListener('abort', onClose);
      };
      const entry = {
        bytes: size,
        grant: () => {
          done();
          resolve();
        },
      };
      const leave = (reason: unknown) => {
        done();
        const at = this.#waiting.indexOf(entry);
        if (at >= 0) this.#waiting.splice(at, 1);
        this.#grant(); // the one behind may fit now
        reject(reason);
      };
      const onAbort = () => leave(signal?.reason);
      const onClose = () => leave(wait.signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      wait.signal?.addEventListener('abort', onClose, { once: true });
      if (wait.timeoutMs !== undefined) {
        const seconds = wait.timeoutMs / 1000;
        timer = setTimeout(
          () =>
            leave(
              new FerryError(
                'unavailable',
                `the transfer memory (FERRY_TRANSFER_MEMORY) had no room for this upload for ${seconds} s; try again later`,
                { retryAfterSeconds: MEMORY_RETRY_AFTER_SECONDS },
              ),
            ),
          wait.timeoutMs,
        );
      }
      this.#waiting.push(entry);
    });
    return this.#releaser(size);
  }

  /**
   * Takes `bytes` at once if no part is waiting and the budget would then hold at most `below` bytes;
   * undefined otherwise. For a part that only speeds one upload up (one beyond its first in flight).
   */
  tryAcquire(bytes: number, below: number): Release | undefined {
    const size = this.#clamp(bytes);
    if (this.#waiting.length > 0 || this.#used + size > Math.min(below, this.capacity)) return undefined;
    this.#take(size);
    return this.#releaser(size);
  }

  #clamp(bytes: number): number {
    return Math.min(Math.max(0, bytes), this.capacity);
  }

  /** Gives `size` back once, however often it is called, and lets the parts waiting in. */
  #releaser(size: number): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used -= size;
      this.#grant();
    };
  }

  #fits(bytes: number): boolean {
    return this.#used + bytes <= this.capacity;
  }

  #take(bytes: number): void {
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** Grants waiting parts in order while the first in line fits. */
  #grant(): void {
    for (let next = this.#waiting[0]; next && this.#fits(next.bytes); next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#take(next.bytes);
      next.grant();
    }
  }
}

/** FERRY_TRANSFER_MEMORY's default: 256 MiB. */
export const DEFAULT_TRANSFER_MEMORY = 256 * 1024 * 1024;
