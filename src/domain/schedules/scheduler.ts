// The scheduler of a worker process (docs/api.md, "Schedules"): a wake loop (src/queue/loop.ts) that
// claims the schedules whose next run has come, runs each (runs.ts), and sleeps until the next one is
// due or the poll interval, whichever comes first. Any number of processes may run it on one database:
// the lease and the unique run per due time make each due time run once.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { Logger } from '../../log.js';
import { msUntil, WakeLoop } from '../../queue/loop.js';
import type { RunRecord, ScheduleRunner } from './runs.js';

export interface SchedulerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  runner: ScheduleRunner;
  /** This process's lease owner id (the worker's). */
  owner: string;
  /** Called after a run started a job: wakes the workers. */
  queued: () => void;
}

export interface SchedulerOptions {
  /** The longest sleep: a schedule created or changed in another process is found within it. */
  pollMs: number;
  /** How long a claim lasts: a run checks its action and writes a job, well within it. */
  leaseMs: number;
  /** Schedules claimed per round. */
  batch: number;
}

export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = { pollMs: 60_000, leaseMs: 60_000, batch: 20 };

export class Scheduler {
  readonly #deps: SchedulerDeps;
  readonly #options: SchedulerOptions;
  readonly #loop: WakeLoop;

  constructor(deps: SchedulerDeps, options: Partial<SchedulerOptions> = {}) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_SCHEDULER_OPTIONS, ...options };
    this.#loop = new WakeLoop({
      name: 'scheduler',
      pollMs: this.#options.pollMs,
      logger: deps.logger,
      round: () => this.#round(),
    });
  }

  start(): void {
    this.#loop.start();
  }

  nudge(): void {
    this.#loop.nudge();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  async #round(): Promise<number | undefined> {
    await this.runDue();
    return msUntil(await this.#deps.runner.nextDue(), this.#deps.clock.now());
  }

  /** Runs every schedule due now that this process wins (tests call it with an injected clock). */
  async runDue(): Promise<RunRecord[]> {
    const { runner, owner, logger } = this.#deps;
    const records: RunRecord[] = [];
    for (;;) {
      const claimed = await runner.claimDue(owner, this.#options.leaseMs, this.#options.batch);
      for (const row of claimed) {
        const result = await runner.run(row, Number(row.next_run_at), owner, false);
        if (result === undefined) continue;
        const { error: _error, ...record } = result;
        records.push(record);
        logger.info(record, `schedule: run ${record.outcome}`);
        if (record.outcome === 'started') this.#deps.queued();
      }
      if (claimed.length < this.#options.batch || this.#loop.stopping) return records;
    }
  }
}
