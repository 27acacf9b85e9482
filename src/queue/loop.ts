// The loop every durable queue of ferry runs in (the transfer worker, the send dispatcher, the webhook
// deliverer, the refresher): a round (claim and start what is due), then a sleep until the round's own
// next-due time or the poll interval, whichever comes first. A nudge (work accepted in this process, or a
// wake-up from another one, src/db/signals.ts) ends the sleep at once; a nudge that comes while a round is
// running starts the next round without sleeping, since that round may have read the table before the
// new work was written. An error in a round is logged and the loop goes on after the poll interval.
// A round that fails because the database cannot answer (src/db/unavailable.ts: PostgreSQL away or
// restarting, SQLite's lock held) starts an outage: one line says so, rounds are tried again after a
// backoff (nudges do not cut it short: they come from work ending, which the database is needed for too),
// and the first round that goes through ends it with one line (docs/api.md, "The database going away").
import { setTimeout as sleep } from 'node:timers/promises';
import { systemTimer, type Timer } from '../clock.js';
import { databaseUnavailable } from '../db/unavailable.js';
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
  /** The timer a sleep runs on (default: the system's); a test's runs out only when the test says. */
  timer?: Timer;
}

/** The first wait after a round the database could not answer, doubled after each such round. */
export const OUTAGE_FIRST_WAIT_MS = 250;
/** The longest wait between rounds while the database is away (the poll interval, if shorter). */
export const OUTAGE_LONGEST_WAIT_MS = 5000;

/**
 * A write that the database could not take because it is away (src/db/unavailable.ts), tried again
 * after the outage backoff (OUTAGE_FIRST_WAIT_MS doubling to OUTAGE_LONGEST_WAIT_MS) for up to
 * patienceMs, then failed with the last error. Work that has finished keeps its result this way
 * through a database restart instead of being counted as a crash and run again.
 */
export async function whileAway<T>(write: () => Promise<T>, patienceMs: number): Promise<T> {
  const giveUpAt = performance.now() + patienceMs;
  let wait = OUTAGE_FIRST_WAIT_MS;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (databaseUnavailable(err) === undefined || performance.now() + wait > giveUpAt) throw err;
    }
    await sleep(wait);
    wait = Math.min(wait * 2, OUTAGE_LONGEST_WAIT_MS);
  }
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
  /** While the database is away: when the outage began (performance.now()) and the next wait. */
  #outage: { since: number; waitMs: number } | undefined;

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
    // During an outage only stop() ends a wait early.
    if (this.#outage === undefined || this.#stopping) this.#wake?.();
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
        this.#recovered();
      } catch (err) {
        if (this.#unavailable(err)) {
          if (this.#stopping) break;
          timedOut = await this.#sleep(this.#outageWait());
          continue;
        }
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

  /** Whether `err` is the database being away; the first of an outage is logged, the rest are not. */
  #unavailable(err: unknown): boolean {
    const why = databaseUnavailable(err);
    if (why === undefined) return false;
    if (this.#outage === undefined) {
      this.#outage = { since: performance.now(), waitMs: OUTAGE_FIRST_WAIT_MS };
      const { name, logger } = this.#options;
      // The driver's code, not its words: they name the host.
      const code = (err as { code?: unknown }).code;
      logger.warn(
        { why, ...(typeof code === 'string' ? { code } : {}) },
        `${name}: the database is ${why === 'busy' ? 'busy' : 'not reachable'}; trying again with backoff`,
      );
    }
    return true;
  }

  /** The wait before the next try during an outage: doubling, up to the poll interval or 5 s. */
  #outageWait(): number {
    const outage = this.#outage;
    if (outage === undefined) return 0;
    const wait = outage.waitMs;
    outage.waitMs = Math.min(wait * 2, OUTAGE_LONGEST_WAIT_MS, this.#options.pollMs);
    return Math.min(wait, this.#options.pollMs);
  }

  #recovered(): void {
    const outage = this.#outage;
    if (outage === undefined) return;
    this.#outage = undefined;
    const { name, logger } = this.#options;
    logger.info({ ms: Math.round(performance.now() - outage.since) }, `${name}: the database answers again`);
  }

  /** Resolves true when `ms` ran out, false when a nudge ended the sleep. */
  #sleep(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const cancel = (this.#options.timer ?? systemTimer).start(Math.max(0, ms), () => {
        this.#wake = undefined;
        resolve(true);
      });
      this.#wake = () => {
        this.#wake = undefined;
        cancel();
        resolve(false);
      };
    });
  }
}
