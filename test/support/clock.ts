// A clock for tests of backoff that must not sleep through the waits they check, and a timer for the
// queue loop's sleeps that runs out only when a test says.
import type { Clock, Timer } from '../../src/clock.js';
import { waitUntil } from './wait.js';

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

/** One sleep a HandTimer was asked for. */
export interface HandSleep {
  readonly ms: number;
  /** `waiting` until the test runs it out, or its loop cancels it (a nudge, stop). */
  readonly state: 'waiting' | 'ran out' | 'canceled';
  /** Ends the sleep as if its time had passed. */
  runOut(): void;
}

/**
 * A timer for src/queue/loop.ts that never runs out by itself: a test reads each sleep the loop asks
 * for (how long, whether something ended it) and runs it out by hand, so no test waits on real time.
 */
export class HandTimer implements Timer {
  readonly sleeps: HandSleep[] = [];

  start(ms: number, ranOut: () => void): () => void {
    let state: HandSleep['state'] = 'waiting';
    this.sleeps.push({
      ms,
      get state() {
        return state;
      },
      runOut() {
        if (state !== 'waiting') return;
        state = 'ran out';
        ranOut();
      },
    });
    return () => {
      if (state === 'waiting') state = 'canceled';
    };
  }

  /** The `n`th sleep asked for (from 0), once the loop has asked for it. */
  asked(n: number): Promise<HandSleep> {
    return waitUntil(() => this.sleeps[n], {
      what: `sleep ${n} to be asked for`,
      detail: () =>
        `${this.sleeps.length} asked for: ${this.sleeps.map((s) => `${s.ms} ms ${s.state}`).join(', ')}`,
    });
  }

  /** Whether a sleep is still waiting (one that could start a round later). */
  get anyWaiting(): boolean {
    return this.sleeps.some((s) => s.state === 'waiting');
  }
}
