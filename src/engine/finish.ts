// A job ends when planning is done and none of its objects is pending or running: complete when none
// failed, partial when some failed and some succeeded or were skipped, failed when all failed
// (DECISIONS). The update is conditional, so concurrent workers finish a job exactly once.
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { JobStatus } from '../domain/states.js';

export async function finishJobIfDone(db: Db, jobId: string, now: number): Promise<JobStatus | undefined> {
  // Called after every object: the usual answer ("not yet") must cost one index probe, not a count.
  const unfinished = await db.kysely
    .selectFrom('job_objects')
    .select('seq')
    .where('job_id', '=', jobId)
    .where('status', 'in', ['pending', 'running'])
    .limit(1)
    .executeTakeFirst();
  if (unfinished) return undefined;
  const job = await db.kysely
    .selectFrom('jobs')
    .select(['status', 'planning_done'])
    .where('id', '=', jobId)
    .executeTakeFirst();
  if (job?.status !== 'running' || job.planning_done !== 1) return undefined;
  const counts = await db.kysely
    .selectFrom('job_objects')
    .select(['status', sql<number>`count(*)`.as('n')])
    .where('job_id', '=', jobId)
    .groupBy('status')
    .execute();
  const n = (status: string) => Number(counts.find((c) => c.status === status)?.n ?? 0);
  if (n('pending') + n('running') > 0) return undefined;
  const failed = n('failed');
  const done = n('succeeded') + n('skipped');
  const status: JobStatus = failed === 0 ? 'complete' : done > 0 ? 'partial' : 'failed';
  const updated = await db.kysely
    .updateTable('jobs')
    .set({ status, finished_at: now, updated_at: now, lease_owner: null, lease_expires_at: null })
    .where('id', '=', jobId)
    .where('status', '=', 'running')
    .where('planning_done', '=', 1)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('job_objects')
            .select('seq')
            .where('job_id', '=', jobId)
            .where('status', 'in', ['pending', 'running']),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0 ? status : undefined;
}
