// Job retry and cancel (SPEC 4.14; DECISIONS): retry puts a partial or failed job back to planning
// with its failed objects pending again; cancel stops a job that has not finished. Both are single
// conditional statements, so a worker finishing the job at the same moment cannot be overwritten.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { conflict } from '../../errors.js';
import type { Clock } from '../clock.js';
import type { TransferViews } from './views.js';

/** run_after of work that must never be claimed again. */
export const NEVER = Number.MAX_SAFE_INTEGER;

export class JobControl {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly views: TransferViews,
    private readonly clock: Clock,
  ) {}

  async retry(workspaceId: string, id: string): Promise<{ job_id: string; status: 'planning' }> {
    const job = await this.views.findJob(workspaceId, id);
    const now = this.clock.now();
    const done = await this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('jobs')
        .set({
          status: 'planning',
          error: null,
          finished_at: null,
          updated_at: now,
          planning_attempts: 0,
          lease_owner: null,
          lease_expires_at: null,
        })
        .where('id', '=', job.id)
        .where('status', 'in', ['partial', 'failed'])
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
      await trx
        .updateTable('job_objects')
        .set({
          status: 'pending',
          attempts: 0,
          // What the listing said may be stale by now: the retried objects are stat'ed afresh.
          size: null,
          source_etag: null,
          error: null,
          run_after: 0,
          lease_owner: null,
          lease_expires_at: null,
        })
        .where('job_id', '=', job.id)
        .where('status', '=', 'failed')
        .execute();
      return true;
    });
    if (!done) throw conflict(`job ${job.id} is ${job.status}; only partial or failed jobs can be retried`);
    return { job_id: job.id, status: 'planning' };
  }

  async cancel(workspaceId: string, id: string): Promise<{ job_id: string; status: 'canceled' }> {
    const job = await this.views.findJob(workspaceId, id);
    const now = this.clock.now();
    const updated = await this.db
      .updateTable('jobs')
      .set({
        status: 'canceled',
        finished_at: now,
        updated_at: now,
        lease_owner: null,
        lease_expires_at: null,
      })
      .where('id', '=', job.id)
      .where('status', 'in', ['planning', 'running'])
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      throw conflict(`job ${job.id} is ${job.status}; only a job that has not finished can be canceled`);
    }
    // Objects not yet started stay pending (the counts show what was left) but are never claimed.
    await this.db
      .updateTable('job_objects')
      .set({ run_after: NEVER })
      .where('job_id', '=', job.id)
      .where('status', '=', 'pending')
      .execute();
    return { job_id: job.id, status: 'canceled' };
  }
}
