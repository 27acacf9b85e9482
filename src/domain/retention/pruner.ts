// Retention (docs/api.md, "Retention"): finished work older than FERRY_RETENTION_DAYS leaves the
// database. The pruner runs in worker processes as a periodic task (src/queue/periodic.ts): whichever
// process claims the task's row prunes, the others wait for its next run, so many workers on one
// PostgreSQL never prune at once. A run deletes in batches, children before parents, each batch its own
// short transaction, renewing its lease between batches and stopping when it lost it; then it frees the
// task until the next run (hourly). One log line per run says what went.
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import * as jobs from '../../lifecycle/jobs.js';
import * as plans from '../../lifecycle/plans.js';
import * as sends from '../../lifecycle/sends.js';
import * as transfers from '../../lifecycle/transfers.js';
import * as webhooks from '../../lifecycle/webhooks.js';
import type { Logger } from '../../log.js';
import { msUntil, WakeLoop } from '../../queue/loop.js';
import type { Queryable } from '../../queue/moves.js';
import { claimTask, ensureTask, finishTask, renewTask, taskDue } from '../../queue/periodic.js';
import { pruneAudit } from '../audit/retention.js';
import { pruneRevoked } from '../shares/shares.js';

/** The task's row in periodic_tasks. */
export const RETENTION_TASK = 'retention';

export interface PrunerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** This process's lease owner id (the worker's). */
  owner: string;
  registry: Registry;
}

export interface PrunerOptions {
  /** Finished work older than this goes (FERRY_RETENTION_DAYS); undefined keeps it. */
  retentionMs: number | undefined;
  /** Audit log events older than this go (FERRY_AUDIT_RETENTION_DAYS); undefined keeps them. */
  auditRetentionMs?: number | undefined;
  /** From the end of one run to the next. */
  intervalMs: number;
  /** Rows per DELETE statement, and per transaction. */
  batch: number;
  /** How long a run's claim lasts unless renewed (it renews between batches). */
  leaseMs: number;
  /** The longest sleep: a run another process left unfinished is found within it. */
  pollMs: number;
}

export const DEFAULT_PRUNER_OPTIONS: Omit<PrunerOptions, 'retentionMs'> = {
  intervalMs: 3_600_000,
  batch: 1000,
  leaseMs: 10 * 60_000,
  pollMs: 5 * 60_000,
};

/** What one run deleted, by table. */
export interface Pruned {
  transfers: number;
  jobs: number;
  job_objects: number;
  sends: number;
  webhook_messages: number;
  webhook_attempts: number;
  shares: number;
  plans: number;
  audit_events: number;
}

export class Pruner {
  readonly #deps: PrunerDeps;
  readonly #options: PrunerOptions;
  readonly #loop: WakeLoop;
  readonly #pruned: Counter<'table'>;
  #ensured = false;

  constructor(deps: PrunerDeps, options: Pick<PrunerOptions, 'retentionMs'> & Partial<PrunerOptions>) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_PRUNER_OPTIONS, ...options };
    this.#pruned = new Counter({
      name: 'ferry_retention_pruned_total',
      help: 'Rows of finished work deleted by retention (FERRY_RETENTION_DAYS), by table',
      labelNames: ['table'] as const,
      registers: [deps.registry],
    });
    this.#loop = new WakeLoop({
      name: 'retention',
      pollMs: this.#options.pollMs,
      logger: deps.logger,
      round: () => this.#round(),
    });
  }

  get options(): PrunerOptions {
    return this.#options;
  }

  start(): void {
    this.#loop.start();
  }

  nudge(): void {
    this.#loop.nudge();
  }

  /** Ends the loop; a run under way stops after its current batch and leaves the task due. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  async #round(): Promise<number | undefined> {
    await this.runDue();
    const due = await taskDue(this.#deps.db.kysely, RETENTION_TASK);
    return msUntil(due, this.#deps.clock.now());
  }

  /**
   * Prunes if the task is due and this process wins its claim: what went, or undefined when it was
   * not this process's turn (tests call it with an injected clock).
   */
  async runDue(): Promise<Pruned | undefined> {
    const { db, clock, owner } = this.#deps;
    const now = clock.now();
    if (!this.#ensured) {
      await ensureTask(db.kysely, RETENTION_TASK, now);
      this.#ensured = true;
    }
    if (!(await claimTask(db.kysely, db.dialect, RETENTION_TASK, owner, now, this.#options.leaseMs))) {
      return undefined;
    }
    let next = now;
    try {
      const pruned = await this.#prune(now);
      if (pruned !== undefined) next = clock.now() + this.#options.intervalMs;
      return pruned;
    } finally {
      // Stopped or lost midway: due again at once (for this process after a restart, or another one).
      await finishTask(db.kysely, RETENTION_TASK, owner, clock.now(), next);
    }
  }

  /** Every table's batches; undefined when the run stopped early (stopping, or the lease lost). */
  async #prune(now: number): Promise<Pruned | undefined> {
    const { retentionMs, auditRetentionMs } = this.#options;
    const cutoff = retentionMs === undefined ? undefined : now - retentionMs;
    const { db, logger } = this.#deps;
    const { batch } = this.#options;
    const started = this.#deps.clock.now();
    const pruned: Pruned = {
      transfers: 0,
      jobs: 0,
      job_objects: 0,
      sends: 0,
      webhook_messages: 0,
      webhook_attempts: 0,
      shares: 0,
      plans: 0,
      audit_events: 0,
    };
    // Jobs before transfers: a transfer over several objects goes only once its job is gone.
    for (;;) {
      if (cutoff === undefined) break;
      const step = await db.kysely.transaction().execute((trx) => jobs.prune(trx, db.dialect, cutoff, batch));
      this.#count(pruned, 'jobs', step.jobs);
      this.#count(pruned, 'job_objects', step.objects);
      if (!(await this.#keepGoing())) return this.#stoppedEarly(pruned);
      if (step.jobs === 0 && step.objects === 0) break;
    }
    const work: Array<[keyof Pruned, (q: Queryable) => Promise<number>]> =
      cutoff === undefined
        ? []
        : [
            ['transfers', (q) => transfers.prune(q, cutoff, batch)],
            ['sends', (q) => sends.prune(q, cutoff, batch)],
            ['webhook_attempts', (q) => webhooks.pruneAttempts(q, cutoff, batch)],
            ['webhook_messages', (q) => webhooks.pruneMessages(q, cutoff, batch)],
            ['shares', (q) => pruneRevoked(q, cutoff, batch)],
            // Plans go an hour after their dry run, run or not (docs/api.md, "Plans"): not after the cutoff.
            ['plans', (q) => plans.prune(q, this.#deps.clock.now(), batch)],
          ];
    const steps = [...work];
    // The audit log has its own retention (docs/api.md, "Audit log").
    if (auditRetentionMs !== undefined) {
      steps.push(['audit_events', (q) => pruneAudit(q, now - auditRetentionMs, batch)]);
    }
    for (const [table, step] of steps) {
      for (;;) {
        const gone = await db.kysely.transaction().execute(step);
        this.#count(pruned, table, gone);
        if (!(await this.#keepGoing())) return this.#stoppedEarly(pruned);
        if (gone === 0) break;
      }
    }
    logger.info(
      {
        pruned,
        ...(cutoff === undefined ? {} : { cutoff: new Date(cutoff).toISOString() }),
        ...(auditRetentionMs === undefined
          ? {}
          : { audit_cutoff: new Date(now - auditRetentionMs).toISOString() }),
        ms: this.#deps.clock.now() - started,
      },
      'retention: pruned finished work',
    );
    return pruned;
  }

  /** A run cut short still logs what it deleted; the task stays due, so the rest goes next time. */
  #stoppedEarly(pruned: Pruned): undefined {
    this.#deps.logger.info({ pruned }, 'retention: pruned finished work, stopped before the end');
    return undefined;
  }

  #count(pruned: Pruned, table: keyof Pruned, n: number): void {
    if (n === 0) return;
    pruned[table] += n;
    this.#pruned.inc({ table }, n);
  }

  /** Between batches: false when the loop is stopping or another process took the task. */
  async #keepGoing(): Promise<boolean> {
    if (this.#loop.stopping) return false;
    const { db, clock, owner, logger } = this.#deps;
    const kept = await renewTask(db.kysely, RETENTION_TASK, owner, clock.now() + this.#options.leaseMs);
    if (!kept) logger.warn('retention: the task was taken over (the lease ran out); this run stops');
    return kept;
  }
}
