// A clock for tests of backoff that must not sleep through the waits they check.
import type { Clock } from '../../src/clock.js';

/**
 * The system clock, which a test may move forward (never back) to skip a wait, or stop, so that every
 * time written meanwhile is the same instant and a wait reads exactly what was decided.
 */
export class SkippingClock implements Clock {
  #offset = 0;
  #frozen: number | undefined;
  now(): number {
    return this.#frozen ?? Date.now() + this.#offset;
  }
  skipTo(ms: number): void {
    if (this.#frozen !== undefined) {
      this.#frozen = Math.max(this.#frozen, ms);
      return;
    }
    const ahead = ms - this.now();
    if (ahead > 0) this.#offset += ahead;
  }
  /** Stops the clock: until `thaw`, it moves only by `skipTo`. */
  freeze(): void {
    this.#frozen = this.now();
  }
  /** Lets it run on from where it stands. */
  thaw(): void {
    if (this.#frozen === undefined) return;
    this.#offset = this.#frozen - Date.now();
    this.#frozen = undefined;
  }
}
