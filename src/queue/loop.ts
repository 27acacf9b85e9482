// The loop every durable queue of ferry runs in (the transfer worker, the send dispatcher, the webhook
// deliverer, the refresher): a round (claim and start what is due), then a sleep until the round's own
// next-due time or the poll interval, whichever comes first. A nudge (work accepted in this process, or a
// wake-up from another one, src/db/signals.ts) ends the sleep at once; a nudge that comes while a round is
// running starts the next round without sleeping, since that round may have read the table before the
// new work was written. An error in a round is logged and the loop goes on after the poll interval.
import type { Logger } from '../log.js';

/** What a round learns for the next one. */
export interface RoundContext {
  /** The sleep before this round ran out (rather than a nudge ending it): a poll or a due time came. */
  timedOut: boolean;
}

export interface WakeLoopOptions {
  /** Named in the log line of a round that failed. */
  name: string;
  /** The longest sleep: work written by another process without a wake-up is found within it. */
  pollMs: number;
  logger: Logger;
  /**
   * One round. Answers how many milliseconds until it has more to do (0: at once), or undefined when
   * only a nudge or the poll interval can bring any.
   */
  round: (context: RoundContext) => Promise<number | undefined>;
}

/** What a round answers for work due at `due` (epoch ms, or undefined for none): the milliseconds until then. */
export function msUntil(due: number | undefined, now: number): number | undefined {
  return due === undefined ? undefined : Math.max(0, due - now);
}

export class WakeLoop {
  readonly #options: WakeLoopOptions;
  #stopping = false;
  #done: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** A nudge came while the loop was not asleep (in a round): not lost. */
  #nudged = false;

  constructor(options: WakeLoopOptions) {
    this.#options = options;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  start(): void {
    this.#done ??= this.#run();
  }

  /** Something may be due: end the sleep now, or run another round after this one. */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.();
  }

  /** Ends the loop: a sleep ends at once, a round under way finishes first. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.nudge();
    await this.#done;
  }

  async #run(): Promise<void> {
    const { name, pollMs, logger, round } = this.#options;
    let timedOut = false;
    while (!this.#stopping) {
      this.#nudged = false;
      let next: number | undefined;
      try {
        next = await round({ timedOut });
      } catch (err) {
        logger.error({ err }, `${name} failed`);
        next = undefined;
      }
      if (this.#stopping) break;
      if (this.#nudged) {
        timedOut = false;
        continue;
      }
      timedOut = await this.#sleep(Math.min(pollMs, next ?? Number.POSITIVE_INFINITY));
    }
  }

  /** Resolves true when `ms` ran out, false when a nudge ended the sleep. */
  #sleep(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(
        () => {
          this.#wake = undefined;
          resolve(true);
        },
        Math.max(0, ms),
      );
      this.#wake = () => {
        this.#wake = undefined;
        clearTimeout(timer);
        resolve(false);
      };
    });
  }
}
