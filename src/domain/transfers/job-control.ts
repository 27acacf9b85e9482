// Job retry and cancel for the API (docs/api.md, "Polling"): finds the workspace's job and asks its
// lifecycle (src/engine/lifecycle/jobs.ts) for the move; a job in the wrong state answers 409 with
// the state it is in. Each move is one conditional transaction, so a worker finishing the job at the
// same moment cannot be overwritten.
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/schema.js';
import * as jobs from '../../engine/lifecycle/jobs.js';
import * as transfers from '../../engine/lifecycle/transfers.js';
import { conflict } from '../../errors.js';
import { type AuditContext, type AuditEntry, record } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { TransferViews } from './views.js';

export class JobControl {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly views: TransferViews,
    private readonly clock: Clock,
    /** Wakes the workers of every process, so that the job's running objects stop at once. */
    private readonly canceled: () => void = () => {},
  ) {}

  /**
   * A move and its audit record (last, only when the move was made), in one transaction: whether it
   * was made.
   */
  #recorded(
    audit: AuditContext,
    entry: AuditEntry,
    move: (trx: Kysely<Database>, now: number) => Promise<boolean>,
  ): Promise<boolean> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await move(trx, now))) return false;
      await record(trx, audit, entry, now);
      return true;
    });
  }

  async retry(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const job = await this.views.findJob(caller, id);
    const entry: AuditEntry = { action: 'job.retry', target: job.id, status: 202 };
    if (!(await this.#recorded(audit, entry, (trx, now) => jobs.retryWithin(trx, job.id, now)))) {
      throw conflict(`job ${job.id} is ${job.status}; only partial or failed jobs can be retried`);
    }
    return { job_id: job.id, status: 'planning' };
  }

  /**
   * A failed transfer over several objects runs its failed objects again: the transfer queued and its
   * job planning, in one transaction (docs/api.md, "Polling"). 409 otherwise, a single transfer included.
   */
  async retryTransfer(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ id: string; status: 'queued' }> {
    const transfer = await this.views.findTransfer(caller, id);
    const job = await this.views.jobOf(transfer.id);
    const entry: AuditEntry = { action: 'transfer.retry', target: transfer.id, status: 202 };
    const retried =
      job !== undefined &&
      (await this.#recorded(audit, entry, async (trx, now) => {
        if (!(await transfers.retry(trx, transfer.id, now))) return false;
        if (!(await jobs.retryWithin(trx, job.id, now)))
          throw conflict(`transfer ${transfer.id} cannot be retried now`);
        return true;
      }));
    if (!retried) {
      throw conflict(
        job === undefined
          ? `transfer ${transfer.id} is a single transfer; only a failed transfer over several objects can be retried`
          : `transfer ${transfer.id} is ${transfer.status}; only failed transfers can be retried`,
      );
    }
    return { id: transfer.id, status: 'queued' };
  }

  async cancel(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'canceled' }> {
    const job = await this.views.findJob(caller, id);
    const entry: AuditEntry = { action: 'job.cancel', target: job.id, status: 202 };
    if (!(await this.#recorded(audit, entry, (trx, now) => jobs.cancelWithin(trx, job.id, now)))) {
      throw conflict(`job ${job.id} is ${job.status}; only a job that has not finished can be canceled`);
    }
    this.canceled();
    return { job_id: job.id, status: 'canceled' };
  }
}
