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
import type { TransferViews } from './views.js';

export class JobControl {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly views: TransferViews,
    private readonly clock: Clock,
    /** Wakes the workers of every process, so that the job's running objects stop at once. */
    private readonly canceled: () => void = () => {},
  ) {}

  async retry(workspaceId: string, id: string): Promise<{ job_id: string; status: 'planning' }> {
    const job = await this.views.findJob(workspaceId, id);
    if (!(await jobs.retry(this.db, job.id, this.clock.now()))) {
      throw conflict(`job ${job.id} is ${job.status}; only partial or failed jobs can be retried`);
    }
    return { job_id: job.id, status: 'planning' };
  }

  /**
   * A failed transfer over several objects runs its failed objects again: the transfer queued and its
   * job planning, in one transaction (docs/api.md, "Polling"). 409 otherwise, a single transfer included.
   */
  async retryTransfer(workspaceId: string, id: string): Promise<{ id: string; status: 'queued' }> {
    const transfer = await this.views.findTransfer(workspaceId, id);
    const job = await this.views.jobOf(transfer.id);
    const retried =
      job !== undefined &&
      (await this.db.transaction().execute(async (trx) => {
        if (!(await transfers.retry(trx, transfer.id, this.clock.now()))) return false;
        if (!(await jobs.retryWithin(trx, job.id, this.clock.now())))
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

  async cancel(workspaceId: string, id: string): Promise<{ job_id: string; status: 'canceled' }> {
    const job = await this.views.findJob(workspaceId, id);
    if (!(await jobs.cancel(this.db, job.id, this.clock.now()))) {
      throw conflict(`job ${job.id} is ${job.status}; only a job that has not finished can be canceled`);
    }
    this.canceled();
    return { job_id: job.id, status: 'canceled' };
  }
}
