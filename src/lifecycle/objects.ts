// The lifecycle of a bulk job's objects: every status a job_objects row takes (OBJECT_MOVES), and the
// moves a worker, a cancel and a retry make. A row is created pending by the planner
// (object-planning.ts), claimed (running, with a lease), and settles as succeeded, skipped or failed
// (object-settlement.ts), or goes back to pending to be tried again. Every write by a worker checks it
// still holds the lease (graphile-worker's rule), so a worker that lost its lease cannot overwrite
// whoever took the object over. Each claim counts a crash in `crashes`, which the claim's settlement
// or hand-back takes back, so an object on which processes keep dying or freezing is failed once its
// lease runs out on the last crash allowed (FERRY_WORK_MAX_CRASHES).

import { sql } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { JobObjectRow } from '../db/schema.js';
import type { CrashPolicy } from '../queue/backoff.js';
import { skipLocked } from '../queue/claim.js';
import { JOB_OBJECTS } from '../queue/leased.js';
import { claimLeased, unleased } from '../queue/leases.js';
import { type Lease, leaseMoves, type Moves, NEVER, type Queryable, rowsChanged } from '../queue/moves.js';
import type { ObjectStatus } from '../states.js';
import { count } from './job-counters.js';
import { afterCrash, type Settlement } from './outcome.js';

export const OBJECT_MOVES = {
  plan: {
    from: [],
    to: ['pending', 'skipped', 'succeeded'],
    by: "the planner, a batch at a time (a sync's equal objects straight as skipped, a verify's objects its listings decided as succeeded)",
  },
  claim: { from: ['pending'], to: ['running'], by: 'a worker, with a lease (attempts + 1)' },
  succeed: { from: ['running'], to: ['succeeded', 'skipped'], by: 'the lease holder' },
  ...leaseMoves(JOB_OBJECTS),
  park: { from: ['pending', 'running'], to: ['pending'], by: 'cancel: never claimed again' },
  retry: { from: ['failed'], to: ['pending'], by: 'retrying the job (attempts start again)' },
  release: {
    from: ['pending'],
    to: ['pending'],
    by: "a sync's held objects made due: its copies when planned, its deletions when every copy succeeded",
  },
  skipHeld: {
    from: ['pending'],
    to: ['skipped'],
    by: "whoever settles a sync's last copy when one failed: its deletions, with the reason",
  },
} as const satisfies Moves<ObjectStatus>;

/**
 * claim: up to `limit` due objects of one job in one statement. The index on (job_id, status,
 * run_after) yields them without reading the job's other rows; PostgreSQL skips rows another worker
 * is claiming (FOR UPDATE SKIP LOCKED), SQLite runs one writer at a time (src/queue/claim.ts).
 */
export async function claim(
  q: Queryable,
  dialect: Dialect,
  lease: Lease,
  jobId: string,
  limit: number,
): Promise<JobObjectRow[]> {
  if (limit <= 0) return [];
  return claimLeased<JobObjectRow>(q, JOB_OBJECTS, lease, {
    keys: ['seq'],
    within: sql`job_id = ${jobId}`,
    pick: sql`
      select seq from job_objects
      where job_id = ${jobId} and status = ${OBJECT_MOVES.claim.from[0]} and run_after <= ${lease.now}
      order by run_after
      limit ${limit}
      ${skipLocked(dialect)}`,
    set: sql`status = ${OBJECT_MOVES.claim.to[0]}, last_attempt_at = ${lease.now}`,
  });
}

/** The object, while this owner holds its lease and it runs: every later write of a worker goes through it. */
export function held(q: Queryable, owner: string, object: Pick<JobObjectRow, 'job_id' | 'seq'>) {
  return q
    .updateTable('job_objects')
    .where('job_id', '=', object.job_id)
    .where('seq', '=', object.seq)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running');
}

/** Bytes copied so far, while running. */
export async function progress(
  q: Queryable,
  owner: string,
  object: Pick<JobObjectRow, 'job_id' | 'seq'>,
  bytes: number,
): Promise<void> {
  await held(q, owner, object).set({ bytes_done: bytes }).execute();
}

/**
 * The worker crashed on an object it holds (outside the attempt, or while settling it): the
 * settlement that follows (afterCrash), or undefined when the lease was lost meanwhile. The caller
 * writes it as any other (settleMany, then the job's end).
 */
export async function crashed(
  q: Queryable,
  owner: string,
  object: Pick<JobObjectRow, 'job_id' | 'seq'>,
  message: string,
  policy: CrashPolicy,
  clock: { now(): number },
): Promise<Settlement | undefined> {
  const row = await q
    .selectFrom('job_objects')
    .select('crashes')
    .where('job_id', '=', object.job_id)
    .where('seq', '=', object.seq)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return row ? afterCrash(message, { count: row.crashes, policy }, clock) : undefined;
}

/**
 * giveUp, for housekeeping (src/queue/leases.ts, takeBack): objects whose lease ran out on the last
 * crash allowed (every claim of them but the ones that settled crashed, or its process died or froze)
 * were failed rather than reclaimed, so that an object that kills or freezes every process that takes
 * it is not taken again; they are counted on their jobs in the same transaction. The caller finishes
 * their jobs if nothing else is left of them.
 */
export async function givenUp(trx: Queryable, given: JobObjectRow[]): Promise<void> {
  const perJob = new Map<string, number>();
  for (const { job_id } of given) perJob.set(job_id, (perJob.get(job_id) ?? 0) + 1);
  for (const [jobId, n] of perJob) await count(trx, jobId, { objects_pending: -n, objects_failed: n });
}

/**
 * park: the objects of a canceled job are never claimed again. Pending ones stay pending (the job's
 * counts show what was left); running ones this worker holds, whose copies it has just stopped, join
 * them. Objects another worker runs are parked by that worker when it sees the cancel.
 */
export async function park(q: Queryable, jobIds: string[], owner?: string): Promise<void> {
  if (jobIds.length === 0) return;
  await q
    .updateTable('job_objects')
    .set({ status: OBJECT_MOVES.park.to[0], run_after: NEVER })
    .where('job_id', 'in', jobIds)
    .where('status', '=', 'pending')
    .execute();
  if (owner === undefined) return;
  await q
    .updateTable('job_objects')
    .set({ status: OBJECT_MOVES.park.to[0], run_after: NEVER, ...unleased(JOB_OBJECTS) })
    .where('job_id', 'in', jobIds)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running')
    .execute();
}

/** retry: a retried job's failed objects are pending again, with a fresh count of attempts. */
export async function retry(q: Queryable, jobId: string, planned = false): Promise<void> {
  const result = await q
    .updateTable('job_objects')
    .set({
      status: OBJECT_MOVES.retry.to[0],
      attempts: 0,
      crashes: 0,
      // What the listing said may be stale by now: the retried objects are stat'ed afresh. A plan's
      // objects keep what the plan saw: they are checked against it whenever they run.
      ...(planned ? {} : { size: null, source_etag: null }),
      error: null,
      run_after: 0,
      ...unleased(JOB_OBJECTS),
    })
    .where('job_id', '=', jobId)
    .where('status', 'in', OBJECT_MOVES.retry.from)
    .executeTakeFirst();
  const n = rowsChanged(result);
  await count(q, jobId, { objects_failed: -n, objects_pending: n });
}
