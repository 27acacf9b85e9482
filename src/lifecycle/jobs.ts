// The lifecycle of a bulk job: every status a jobs row takes, and every write of one. A job is created
// planning; a planner (one worker at a time, under the job's lease) lists the source or reads the
// manifest and commits objects in batches, which makes the job running while planning goes on. The
// job ends when planning is done and no object is pending or running: complete when none failed,
// partial when some failed and some succeeded or were skipped, failed when all failed
// (docs/api.md, "Copy"). Cancel and retry come from the API.

import { sql } from 'kysely';
import { jobData, jobEvent } from '../api/events.js';
import type { Dialect } from '../db/database.js';
import type { JobRow } from '../db/schema.js';
import { manifestKeys } from '../durable/work.js';
import { skipLocked } from '../queue/claim.js';
import { JOBS } from '../queue/leased.js';
import { claimLeased, heldOff, leaseFree, unleased } from '../queue/leases.js';
import { type Lease, type Moves, type Queryable, rowsChanged } from '../queue/moves.js';
import { emit } from '../queue/outbox.js';
import {
  isFinishedJob,
  JOB_ACTIVE,
  JOB_FINISHED,
  type JobKind,
  type JobStatus,
  type Overwrite,
} from '../states.js';
import { type PlannedObject, plan as planObjects, settleHeld } from './object-planning.js';
import * as objects from './objects.js';
import { destinationOf, locationIds, sourceOf } from './specs.js';
import * as transfers from './transfers.js';

export const JOB_MOVES = {
  create: { from: [], to: ['planning'], by: 'the API, when it accepts a bulk copy' },
  plan: { from: ['planning', 'running'], to: ['running'], by: 'the planner, at each committed batch' },
  planningFailed: {
    from: ['planning', 'running'],
    to: ['failed'],
    by: 'the planner, after a lasting failure',
  },
  finish: { from: ['running'], to: ['complete', 'partial', 'failed'], by: 'whoever settles the last object' },
  cancel: { from: ['planning', 'running'], to: ['canceled'], by: 'the API' },
  retry: { from: ['partial', 'failed'], to: ['planning'], by: 'the API (its failed objects become pending)' },
} as const satisfies Moves<JobStatus>;

export interface NewJob {
  id: string;
  workspaceId: string;
  source: string;
  destination: string;
  overwrite: Overwrite;
  manifest: string[] | undefined;
  /** The transfer over several objects this job runs (its objects then carry their own work). */
  transferId?: string;
  /** A bulk copy (the default) or a sync, and the options given (JSON of specs.ts's JobOptions). */
  kind?: JobKind;
  options?: string;
  /** The plan this job runs (docs/api.md, "Plans"). */
  planId?: string;
  /** The job's cap in bytes per second (docs/api.md, "Bandwidth"). */
  bandwidthLimit?: number;
  /** The schedule whose run this job is (docs/api.md, "Schedules"). */
  scheduleId?: string;
  /** The locations it touches when more than its source and destination (its transfer's). */
  touches?: string[];
  /** An undo's: the job it puts back (docs/api.md, "Undo"). */
  undoOf?: string;
}

/** create: a planning job, and its manifest when it has one. */
export async function create(
  q: Queryable,
  job: NewJob,
  now: number,
): Promise<{ job_id: string; status: 'planning' }> {
  const status = JOB_MOVES.create.to[0];
  await q
    .insertInto('jobs')
    .values({
      id: job.id,
      workspace_id: job.workspaceId,
      status,
      source: job.source,
      destination: job.destination,
      location_ids: locationIds(job.touches ?? [sourceOf(job).location_id, destinationOf(job).location_id]),
      overwrite: job.overwrite,
      has_manifest: job.manifest ? 1 : 0,
      ...(job.transferId === undefined ? {} : { transfer_id: job.transferId }),
      ...(job.kind === undefined ? {} : { kind: job.kind }),
      ...(job.options === undefined ? {} : { options: job.options }),
      ...(job.planId === undefined ? {} : { plan_id: job.planId }),
      ...(job.bandwidthLimit === undefined ? {} : { bandwidth_limit: job.bandwidthLimit }),
      ...(job.scheduleId === undefined ? {} : { schedule_id: job.scheduleId }),
      ...(job.undoOf === undefined ? {} : { undo_of: job.undoOf }),
      error: null,
      ...unleased(JOBS),
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    })
    .execute();
  if (job.manifest) {
    await q
      .insertInto('job_manifests')
      .values({ job_id: job.id, keys: manifestKeys.encode(job.manifest) })
      .execute();
  }
  return { job_id: job.id, status };
}

/**
 * A job to plan: planning (new, or retried), or running with planning unfinished (its planner had
 * committed some objects when it died or was stopped), and neither leased nor waiting out a backoff.
 * Takes the job's lease; the status does not change.
 */
export async function claimPlanning(
  q: Queryable,
  dialect: Dialect,
  lease: Lease,
): Promise<JobRow | undefined> {
  const [job] = await claimLeased<JobRow>(q, JOBS, lease, {
    pick: sql`
      select id from jobs
      where (status = 'planning' or (status = 'running' and planning_done = 0))
        and ${leaseFree(JOBS, lease.now)}
      order by created_at
      limit 1
      ${skipLocked(dialect)}`,
    set: sql`started_at = coalesce(started_at, ${lease.now}), updated_at = ${lease.now}`,
  });
  return job;
}

function planning(q: Queryable, owner: string, jobId: string) {
  return q
    .updateTable('jobs')
    .where('id', '=', jobId)
    .where('lease_owner', '=', owner)
    .where('status', 'in', JOB_MOVES.plan.from);
}

/**
 * plan: commits one batch of objects with the job's planned count, in one transaction; false when
 * the job is no longer ours to plan (canceled, or the lease lost).
 */
export async function commitBatch(
  q: Queryable,
  owner: string,
  jobId: string,
  firstSeq: number,
  batch: PlannedObject[],
  now: number,
): Promise<boolean> {
  return q.transaction().execute(async (trx) => {
    const updated = await planning(trx, owner, jobId)
      .set({ planned_count: firstSeq + batch.length, status: JOB_MOVES.plan.to[0], updated_at: now })
      .executeTakeFirst();
    if (rowsChanged(updated) === 0) return false;
    await planObjects(trx, jobId, firstSeq, batch);
    return true;
  });
}

/** plan, the last time: every object is known; the lease is given up and the manifest dropped. */
export async function planningDone(q: Queryable, owner: string, jobId: string, now: number): Promise<void> {
  const updated = await planning(q, owner, jobId)
    .set({
      planning_done: 1,
      status: JOB_MOVES.plan.to[0],
      ...unleased(JOBS),
      updated_at: now,
    })
    .executeTakeFirst();
  if (rowsChanged(updated) > 0) await q.deleteFrom('job_manifests').where('job_id', '=', jobId).execute();
}

/** After a passing failure: no owner and a lease end in the future, so nobody plans it before then. */
export async function planningBackoff(
  q: Queryable,
  owner: string,
  jobId: string,
  error: string,
  runAfter: number,
  now: number,
): Promise<void> {
  await planning(q, owner, jobId)
    .set({ ...heldOff(JOBS, runAfter), error, updated_at: now })
    .execute();
}

/** planningFailed: the source cannot be planned; the job ends failed with the reason. */
export async function planningFailed(q: Queryable, owner: string, jobId: string, error: string, now: number) {
  await q.transaction().execute(async (trx) => {
    const row = await planning(trx, owner, jobId)
      .set({
        status: JOB_MOVES.planningFailed.to[0],
        error,
        finished_at: now,
        updated_at: now,
        ...unleased(JOBS),
      })
      .returningAll()
      .executeTakeFirst();
    if (row) await ended(trx, row, now);
  });
}

/**
 * The webhook event of a job that just ended (docs/webhooks.md), in the transaction of its move; a
 * job that runs a transfer ends the transfer instead, whose event it is.
 */
async function ended(trx: Queryable, row: JobRow, now: number): Promise<void> {
  const status = row.status;
  if (!isFinishedJob(status)) return;
  if (row.transfer_id !== null) {
    const end = {
      failed: Number(row.objects_failed),
      total: Number(row.objects_total),
      bytes: Number(row.bytes_finished),
      error: status === 'failed' && Number(row.objects_failed) === 0 ? row.error : null,
      job: row,
    };
    if (status === 'canceled') end.error = 'canceled';
    await transfers.jobEnded(trx, row.transfer_id, end, now);
    return;
  }
  await emit(trx, { workspaceId: row.workspace_id, type: jobEvent(status), data: jobData(row), at: now });
}

/**
 * finish: ends the job when planning is done and none of its objects is pending or running, as its
 * counters say (kept in the transaction of every object's move, so reading them costs one row). Called
 * after every object; the update is conditional, so concurrent workers finish a job exactly once.
 * A sync's deletions, held back until then, are released once all else has settled (or skipped with
 * the reason when a copy failed; docs/api.md, "Sync").
 */
export async function finishIfDone(q: Queryable, jobId: string, now: number): Promise<JobStatus | undefined> {
  const read = () =>
    q
      .selectFrom('jobs')
      .select([
        'status',
        'planning_done',
        'objects_pending',
        'objects_failed',
        'objects_succeeded',
        'objects_skipped',
        'objects_deleted',
        'objects_held',
      ])
      .where('id', '=', jobId)
      .executeTakeFirst();
  let job = await read();
  if (job === undefined || job.planning_done !== 1) return undefined;
  if (!(JOB_MOVES.finish.from as readonly JobStatus[]).includes(job.status)) return undefined;
  const held = Number(job.objects_held);
  if (held > 0 && Number(job.objects_pending) === held) {
    const failed = Number(job.objects_failed);
    const reason =
      failed === 0
        ? undefined
        : `not removed: ${failed} ${failed === 1 ? 'copy' : 'copies'} of this sync failed`;
    await settleHeld(q, jobId, held, reason);
    if (reason === undefined) return undefined;
    job = await read();
    if (job === undefined) return undefined;
  }
  if (Number(job.objects_pending) > 0) return undefined;
  const done = Number(job.objects_succeeded) + Number(job.objects_skipped) + Number(job.objects_deleted);
  const [complete, partial, failed] = JOB_MOVES.finish.to;
  const status = Number(job.objects_failed) === 0 ? complete : done > 0 ? partial : failed;
  return q.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('jobs')
      .set({ status, finished_at: now, updated_at: now, ...unleased(JOBS) })
      .where('id', '=', jobId)
      .where('status', 'in', JOB_MOVES.finish.from)
      .where('planning_done', '=', 1)
      .where('objects_pending', '=', 0)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    await ended(trx, row, now);
    return status;
  });
}

/**
 * cancel: stops a job that has not finished, and parks its pending objects in the same transaction,
 * so no worker claims one after the cancel. Objects running at the moment are stopped by the
 * workers that run them when they next renew their leases. False when the job had already ended.
 */
export async function cancel(q: Queryable, jobId: string, now: number): Promise<boolean> {
  return q.transaction().execute((trx) => cancelWithin(trx, jobId, now));
}

/** cancel, in the caller's transaction (a request's cancel records itself in it: src/domain/audit). */
export async function cancelWithin(trx: Queryable, jobId: string, now: number): Promise<boolean> {
  const updated = await trx
    .updateTable('jobs')
    .set({
      status: JOB_MOVES.cancel.to[0],
      finished_at: now,
      updated_at: now,
      ...unleased(JOBS),
    })
    .where('id', '=', jobId)
    .where('status', 'in', JOB_MOVES.cancel.from)
    .returningAll()
    .executeTakeFirst();
  if (!updated) return false;
  await objects.park(trx, [jobId]);
  await ended(trx, updated, now);
  return true;
}

/** retry: a partial or failed job plans again, with its failed objects pending; false otherwise. */
export async function retry(q: Queryable, jobId: string, now: number): Promise<boolean> {
  return q.transaction().execute((trx) => retryWithin(trx, jobId, now));
}

/** retry, in the caller's transaction (a transfer's retry retries its job with it). */
export async function retryWithin(trx: Queryable, jobId: string, now: number): Promise<boolean> {
  const updated = await trx
    .updateTable('jobs')
    .set({
      status: JOB_MOVES.retry.to[0],
      error: null,
      finished_at: null,
      updated_at: now,
      planning_attempts: 0,
      ...unleased(JOBS),
    })
    .where('id', '=', jobId)
    .where('status', 'in', JOB_MOVES.retry.from)
    .returning('plan_id')
    .executeTakeFirst();
  if (updated === undefined) return false;
  await objects.retry(trx, jobId, updated.plan_id !== null);
  return true;
}

/** Of these jobs, the ones canceled since their objects were claimed. */
export async function canceledAmong(q: Queryable, jobIds: string[]): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const rows = await q
    .selectFrom('jobs')
    .select('id')
    .where('id', 'in', jobIds)
    .where('status', '=', JOB_MOVES.cancel.to[0])
    .execute();
  return rows.map((r) => r.id);
}

/** Jobs whose objects may be claimed, oldest first, with their workspaces. */
export async function active(q: Queryable): Promise<Array<{ id: string; workspace_id: string }>> {
  return q
    .selectFrom('jobs')
    .select(['id', 'workspace_id'])
    .where('status', 'in', JOB_ACTIVE)
    .orderBy('created_at')
    .execute();
}

/** When the next job waiting out a planning backoff may be planned again; undefined: none. */
export async function nextPlanningDue(q: Queryable, now: number): Promise<number | undefined> {
  const row = await q
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('lease_expires_at').as('next'))
    .where('status', 'in', JOB_ACTIVE)
    .where('lease_owner', 'is', null)
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

export interface PrunedJobs {
  jobs: number;
  objects: number;
}

/**
 * prune: one batch of the jobs that finished before `cutoff` leaves the table (docs/api.md,
 * "Retention"); run it in its own short transaction, again until it answers zeros. It takes up to
 * `limit` such jobs (locked on PostgreSQL; a job another transaction holds, a retry say, is skipped),
 * deletes at most `limit` of their objects, and only once none is left their manifests and the jobs
 * themselves: children before parents, never more than `limit` rows per statement.
 */
export async function prune(
  q: Queryable,
  dialect: Dialect,
  cutoff: number,
  limit: number,
): Promise<PrunedJobs> {
  const picked = await sql<{ id: string }>`
    select id from jobs
    where status in (${sql.join(JOB_FINISHED)}) and finished_at < ${cutoff}
    order by finished_at
    limit ${limit}
    ${skipLocked(dialect)}`.execute(q);
  const ids = picked.rows.map((row) => row.id);
  if (ids.length === 0) return { jobs: 0, objects: 0 };
  const objectsGone = rowsChanged(
    await q
      .deleteFrom('job_objects')
      .where('job_id', 'in', ids)
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('job_id', 'seq'),
          'in',
          selectFrom('job_objects')
            .select(['job_id', 'seq'])
            .where('job_id', 'in', ids)
            .limit(limit)
            .$asTuple('job_id', 'seq'),
        ),
      )
      .executeTakeFirst(),
  );
  if (objectsGone >= limit) return { jobs: 0, objects: objectsGone };
  await q.deleteFrom('job_manifests').where('job_id', 'in', ids).execute();
  const jobsGone = rowsChanged(
    await q
      .deleteFrom('jobs')
      .where('id', 'in', ids)
      .where('status', 'in', JOB_FINISHED)
      .where('finished_at', '<', cutoff)
      .executeTakeFirst(),
  );
  return { jobs: jobsGone, objects: objectsGone };
}
