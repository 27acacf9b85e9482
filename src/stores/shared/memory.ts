// The process's budget for transfer bytes held in memory (FERRY_TRANSFER_MEMORY): every part a store
// reads from a source before sending it takes its size from the budget first and gives it back when
// the part has been sent, so all transfers together hold at most the budget however many run at once.
// A part that does not fit waits (first come, first served) instead of growing the heap; its source
// stream is not read meanwhile, so backpressure reaches the source.
//
// The budget cannot deadlock: a part waits only before it is read, holding nothing, and a part that
// holds budget is already being sent and needs no more. A part larger than the whole budget waits
// until nothing else is held, then goes alone.

export type Release = () => void;

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

  /** Takes `bytes` (capped at the capacity), waiting in line for room; resolves with its release. */
  async acquire(bytes: number, signal?: AbortSignal): Promise<Release> {
    const size = this.#clamp(bytes);
    signal?.throwIfAborted();
    if (this.#waiting.length === 0 && this.#fits(size)) this.#take(size);
    else {
      await new Promise<void>((resolve, reject) => {
        const entry = {
          bytes: size,
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const at = this.#waiting.indexOf(entry);
          if (at >= 0) this.#waiting.splice(at, 1);
          this.#grant(); // the one behind may fit now
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.#waiting.push(entry);
      });
    }
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
