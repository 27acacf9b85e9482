// The refresher: a loop in worker processes that looks for OAuth locations whose access token expires
// within FERRY_REFRESH_AHEAD_SECONDS, or whose refresh was requested, every FERRY_REFRESH_POLL_SECONDS,
// and refreshes them (refresh.ts). After a restart many tokens fall due at once: each refresh waits a
// random part of the poll interval first, and at most `concurrency` run at once in a process.
import { WakeLoop } from '../../queue/loop.js';
import { Semaphore } from '../../util/semaphore.js';
import { dueLocations, type RefreshDeps, refreshLocation } from './refresh.js';

export interface RefresherOptions {
  pollMs: number;
  /** Refreshes at once in this process. */
  concurrency: number;
  /**
   * The longest random wait before a refresh (default: half the poll interval, at most 5 s); 0 in
   * tests that step the loop by hand.
   */
  jitterMs: number;
  /** Locations taken per scan. */
  batch: number;
}

export const DEFAULT_REFRESHER_OPTIONS: Omit<RefresherOptions, 'pollMs' | 'jitterMs'> = {
  concurrency: 4,
  batch: 100,
};

export class Refresher {
  readonly #options: RefresherOptions;
  readonly #slots: Semaphore;
  /** Locations this process is refreshing or about to (a scan does not take them twice). */
  readonly #inFlight = new Set<string>();
  readonly #loop: WakeLoop;
  readonly #timers = new Map<NodeJS.Timeout, () => void>();

  constructor(
    private readonly deps: RefreshDeps,
    options: Partial<RefresherOptions> & Pick<RefresherOptions, 'pollMs'>,
  ) {
    this.#options = {
      ...DEFAULT_REFRESHER_OPTIONS,
      jitterMs: Math.min(5000, Math.floor(options.pollMs / 2)),
      ...options,
    };
    this.#slots = new Semaphore(this.#options.concurrency);
    this.#loop = new WakeLoop({
      name: 'refresher',
      pollMs: this.#options.pollMs,
      logger: deps.logger,
      // A scan's refreshes run on while the next interval starts: one slow token endpoint does not
      // hold up the others. The scan's read is waited for, so that the database being away is the
      // loop's to wait out, with one log line (src/queue/loop.ts).
      round: async () => {
        // Each refresh logs its own failure (#refresh).
        void this.#refreshAll(await this.#due());
        return undefined;
      },
    });
  }

  get #stopping(): boolean {
    return this.#loop.stopping;
  }

  start(): void {
    this.#loop.start();
  }

  /** Refreshes waiting for a slot (past their jitter): a test reads it to see the bound hold them back. */
  get waitingForSlot(): number {
    return this.#slots.waiting;
  }

  /** Look now (a refresh was requested in this process). */
  nudge(): void {
    this.#loop.nudge();
  }

  /**
   * One scan: every due location is refreshed (after its jitter) before this resolves. Tests call it
   * directly instead of start().
   */
  async tick(): Promise<void> {
    await this.#refreshAll(await this.#due());
  }

  /** The due locations this process is not refreshing already. */
  async #due(): Promise<string[]> {
    return (await dueLocations(this.deps, this.#options.batch)).filter((id) => !this.#inFlight.has(id));
  }

  async #refreshAll(ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.#refresh(id)));
  }

  async #refresh(id: string): Promise<void> {
    this.#inFlight.add(id);
    try {
      const jitter = Math.floor((this.deps.random ?? Math.random)() * this.#options.jitterMs);
      if (jitter > 0) await this.#sleep(jitter);
      if (this.#stopping) return;
      const release = await this.#slots.acquire();
      try {
        if (this.#stopping) return;
        await refreshLocation(this.deps, id, { kind: 'due' });
      } finally {
        release();
      }
    } catch (err) {
      this.deps.logger.error({ err, location: id }, 'refresh crashed');
    } finally {
      this.#inFlight.delete(id);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.set(timer, resolve);
    });
  }

  /** Stops scanning; refreshes under way finish (they are short: the token request times out). */
  async stop(): Promise<void> {
    await this.#loop.stop();
    for (const [timer, resolve] of this.#timers) {
      clearTimeout(timer);
      resolve();
    }
    this.#timers.clear();
    const slots = await Promise.all(
      Array.from({ length: this.#options.concurrency }, () => this.#slots.acquire()),
    );
    for (const release of slots) release();
  }
}
