// Job retry and cancel for the API (docs/api.md, "Polling"): finds the workspace's job and asks its
// lifecycle (src/engine/lifecycle/jobs.ts) for the move; a job in the wrong state answers 409 with
// the state it is in. Each move is one conditional transaction, so a worker finishing the job at the
// same moment cannot be overwritten.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import * as jobs from '../../engine/lifecycle/jobs.js';
import { conflict } from '../../errors.js';
import type { Clock } from '../clock.js';
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

  async cancel(workspaceId: string, id: string): Promise<{ job_id: string; status: 'canceled' }> {
    const job = await this.views.findJob(workspaceId, id);
    if (!(await jobs.cancel(this.db, job.id, this.clock.now()))) {
      throw conflict(`job ${job.id} is ${job.status}; only a job that has not finished can be canceled`);
    }
    this.canceled();
    return { job_id: job.id, status: 'canceled' };
  }
}
