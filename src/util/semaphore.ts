// A counting semaphore: at most `size` holders at once, the rest wait in order.
export class Semaphore {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Callers waiting for a permit (tests read it to see a bound hold the rest back). */
  get waiting(): number {
    return this.#waiting.length;
  }

  async acquire(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
