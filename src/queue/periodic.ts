// Periodic tasks (the retention pruner, docs/api.md "Retention"): one row per task in periodic_tasks,
// claimed like any queue row (src/queue/claim.ts) when its run_after has come and nobody holds a live
// lease on it, so that of many worker processes on one database one runs it at a time, and the time of
// the next run survives restarts. Every later write checks the owner: a process whose lease ran out
// (it froze) cannot reschedule over the one that took the task from it.
import { sql } from 'kysely';
import type { Dialect } from '../db/database.js';
import { skipLocked } from './claim.js';
import { PERIODIC_TASKS } from './leased.js';
import { claimLeased, leaseFree, renewLeases, unleased } from './leases.js';
import type { Queryable } from './moves.js';

export interface PeriodicTask {
  name: string;
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_run_at: number | null;
}

/** The task's row, due at once, unless it is there already (every process calls this at start). */
export async function ensureTask(q: Queryable, name: string, runAfter: number): Promise<void> {
  await q
    .insertInto('periodic_tasks')
    .values({ name, run_after: runAfter, ...unleased(PERIODIC_TASKS), last_run_at: null })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/** Takes the task for `owner` until now + leaseMs if it is due and free; answers whether it did. */
export async function claimTask(
  q: Queryable,
  dialect: Dialect,
  name: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const rows = await claimLeased<PeriodicTask>(
    q,
    PERIODIC_TASKS,
    { owner, now, until: now + leaseMs },
    {
      pick: sql`select name from periodic_tasks
      where name = ${name} and run_after <= ${now} and ${leaseFree(PERIODIC_TASKS, now)}
      ${skipLocked(dialect)}`,
    },
  );
  return rows.length === 1;
}

/** Extends the owner's lease; false when the lease was lost (another process took the task). */
export async function renewTask(q: Queryable, name: string, owner: string, until: number): Promise<boolean> {
  return (await renewLeases(q, PERIODIC_TASKS, owner, until, { name })) === 1;
}

/** Ends the owner's run: free, and not due again before `next`. */
export async function finishTask(
  q: Queryable,
  name: string,
  owner: string,
  now: number,
  next: number,
): Promise<void> {
  await q
    .updateTable('periodic_tasks')
    .set({ ...unleased(PERIODIC_TASKS), last_run_at: now, run_after: next })
    .where('name', '=', name)
    .where('lease_owner', '=', owner)
    .execute();
}

/** When the task is next worth a look: its run_after, or the end of a lease someone holds. */
export async function taskDue(q: Queryable, name: string): Promise<number | undefined> {
  const row = await q
    .selectFrom('periodic_tasks')
    .select(['run_after', 'lease_owner', 'lease_expires_at'])
    .where('name', '=', name)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const leased = row.lease_owner !== null && row.lease_expires_at !== null;
  return Number(leased ? Math.max(Number(row.run_after), Number(row.lease_expires_at)) : row.run_after);
}
