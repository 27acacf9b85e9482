// What the worker, fair share and the job views read of a job's objects while they run: counts by
// state, bytes in flight, the next due time. Reads only; the moves are written by objects.ts and its
// siblings.

import { sql } from 'kysely';
import { NEVER, type Queryable } from '../queue/moves.js';
import type { ObjectStatus } from '../states.js';

/** How many of the job's objects are in each state, counted now (the counters' check, in tests). */
export async function countByStatus(q: Queryable, jobId: string): Promise<Record<ObjectStatus, number>> {
  const rows = await q
    .selectFrom('job_objects')
    .select(['status', sql<number>`count(*)`.as('n')])
    .where('job_id', '=', jobId)
    .groupBy('status')
    .execute();
  const counts: Record<ObjectStatus, number> = {
    pending: 0,
    running: 0,
    succeeded: 0,
    skipped: 0,
    failed: 0,
  };
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/** Bytes copied so far by the job's running objects (a few rows, through the claim index). */
export async function runningBytes(q: Queryable, jobId: string): Promise<number> {
  const row = await q
    .selectFrom('job_objects')
    .select(sql<number>`coalesce(sum(bytes_done), 0)`.as('bytes'))
    .where('job_id', '=', jobId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(row?.bytes ?? 0);
}

/** runningBytes as a scalar subquery of the job whose id is the column `jobId`, for one statement. */
export function runningBytesOf(jobId: string) {
  return sql<number | string>`(select coalesce(sum(o.bytes_done), 0) from job_objects o
    where o.job_id = ${sql.ref(jobId)} and o.status = 'running')`;
}

/** When the next pending object waiting out a backoff is due (parked ones never are); undefined: none. */
export async function nextDue(q: Queryable, now: number): Promise<number | undefined> {
  const row = await q
    .selectFrom('job_objects')
    .select((eb) => eb.fn.min('run_after').as('next'))
    .where('status', '=', 'pending')
    .where('run_after', '>', now)
    .where('run_after', '<', NEVER)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Objects running now, per job (for fair share: what each workspace holds). */
export async function runningByJob(q: Queryable, jobIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (jobIds.length === 0) return out;
  const rows = await q
    .selectFrom('job_objects')
    .select(['job_id', sql<number>`count(*)`.as('n')])
    .where('job_id', 'in', jobIds)
    .where('status', '=', 'running')
    .groupBy('job_id')
    .execute();
  for (const row of rows) out.set(row.job_id, Number(row.n));
  return out;
}
