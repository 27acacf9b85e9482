// Planning a job's objects: the planner's batches become job_objects rows (OBJECT_MOVES.plan), and a
// sync's held objects are released or skipped (release, skipHeld) when their time comes (docs/api.md,
// "Sync"). Each write counts what it moved on the job in the same transaction (job-counters.ts).

import { createHash } from 'node:crypto';
import { objectSourceHashes } from '../durable/work.js';
import { JOB_OBJECTS } from '../queue/leased.js';
import { unleased } from '../queue/leases.js';
import { NEVER, type Queryable, rowsChanged } from '../queue/moves.js';
import type { Verdict } from '../states.js';
import type { HashKind } from '../stores/contract.js';
import { type Counter, count, VERDICT_COUNTERS } from './job-counters.js';
import { OBJECT_MOVES } from './objects.js';

/** What identifies a job object's key in the index (key_hash): its SHA-1, as hex. */
export function keyHash(key: string): string {
  return createHash('sha1').update(key, 'utf8').digest('hex');
}

/**
 * Why an object of a sync is held back (pending, never due) when planned: its copies until planning
 * is done (a sync with deletions fails before changing anything when it would remove too many), its
 * deletions until every copy has settled (docs/api.md, "Sync").
 */
export type Held = 'until-planned' | 'until-copied';

/**
 * What a verify found for one key (docs/api.md, "Verify"): its verdict, how it was told (the report's
 * reason), and the checksums compared when a hash told it.
 */
export interface Found {
  verdict: Verdict;
  reason: string;
  checksums?: { source: string; destination: string };
}

/** What the planner found for one key. */
export interface PlannedObject {
  key: string;
  keyHash: string;
  size: number | null;
  etag: string | null;
  /** The hashes the source's listing reported (Entry.hashes), for the first attempt to check. */
  hashes?: Partial<Record<HashKind, string>>;
  /** JSON of the object's own work, for a job that runs a transfer over several objects. */
  work?: string;
  /** Planned straight as skipped, with the reason: a sync's object equal at the destination, or a key a plan's run found that the plan lacks. */
  skipped?: string;
  held?: Held;
  /** A verify's object its listings decided: planned settled, as succeeded (docs/api.md, "Verify"). */
  found?: Found;
  /** What the planner knows of what its work will do (src/engine/backup.ts, PLANNED_CREATED). */
  touched?: string;
}

/** How a planned object's listed hashes are kept (job_objects.source_hashes): JSON, or null for none. */
function listedHashes(hashes: Partial<Record<HashKind, string>> | undefined): string | null {
  const known = Object.entries(hashes ?? {}).filter(([, value]) => value !== undefined);
  return known.length === 0 ? null : objectSourceHashes.encode(Object.fromEntries(known));
}

/**
 * plan: inserts a batch of objects; a key the job already has (from an earlier planner) is ignored.
 * Counts what was inserted on the job (in the caller's transaction), and returns it.
 */
export async function plan(
  q: Queryable,
  jobId: string,
  firstSeq: number,
  batch: PlannedObject[],
): Promise<number> {
  if (batch.length === 0) return 0;
  const result = await q
    .insertInto('job_objects')
    .values(
      batch.map((p, i) => ({
        job_id: jobId,
        seq: firstSeq + i,
        key: p.key,
        key_hash: p.keyHash,
        status:
          p.found !== undefined
            ? OBJECT_MOVES.plan.to[2]
            : p.skipped === undefined
              ? OBJECT_MOVES.plan.to[0]
              : OBJECT_MOVES.plan.to[1],
        size: p.size,
        source_etag: p.etag,
        source_hashes: listedHashes(p.hashes),
        ...(p.work === undefined ? {} : { work: p.work }),
        touched: p.touched ?? null,
        // Every row names every column: SQLite fills a column one row of a batch lacks with NULL, not its default.
        run_after: p.held === undefined ? 0 : NEVER,
        error: p.skipped ?? p.found?.reason ?? null,
        verdict: p.found?.verdict ?? null,
        source_hash: p.found?.checksums?.source ?? null,
        destination_hash: p.found?.checksums?.destination ?? null,
        last_attempt_at: null,
        ...unleased(JOB_OBJECTS),
      })),
    )
    .onConflict((oc) => oc.columns(['job_id', 'key_hash']).doNothing())
    .returning(['status', 'run_after', 'work', 'verdict'])
    .execute();
  // What was inserted (a key an earlier planner committed is not), counted by status.
  const inserted = result.length;
  const skipped = result.filter((r) => r.status === OBJECT_MOVES.plan.to[1]).length;
  const succeeded = result.filter((r) => r.status === OBJECT_MOVES.plan.to[2]).length;
  const held = result.filter((r) => Number(r.run_after) === NEVER && r.work !== null).length;
  const by: Partial<Record<Counter, number>> = {
    objects_total: inserted,
    objects_pending: inserted - skipped - succeeded,
    objects_skipped: skipped,
    objects_succeeded: succeeded,
    objects_held: held,
  };
  for (const { verdict } of result) {
    if (verdict !== null) by[VERDICT_COUNTERS[verdict]] = (by[VERDICT_COUNTERS[verdict]] ?? 0) + 1;
  }
  await count(q, jobId, by);
  return inserted;
}

/**
 * release: a sync's copies held while it planned become due (planning is done, its deletions within
 * max_delete). Deletions, which carry their work, stay held.
 */
export async function releaseCopies(q: Queryable, jobId: string): Promise<void> {
  await q
    .updateTable('job_objects')
    .set({ run_after: 0 })
    .where('job_id', '=', jobId)
    .where('status', '=', OBJECT_MOVES.release.from[0])
    .where('run_after', '=', NEVER)
    .where('work', 'is', null)
    .execute();
}

/**
 * release or skipHeld: a sync's `held` deletions, once nothing else of it is pending or running. When
 * `reason` is given (a copy failed) they are skipped with it, else made due. Exactly once: the job's
 * held count is taken in the same transaction, conditionally. False when someone else did it.
 */
export async function settleHeld(
  q: Queryable,
  jobId: string,
  held: number,
  reason: string | undefined,
): Promise<boolean> {
  return q.transaction().execute(async (trx) => {
    const taken = await trx
      .updateTable('jobs')
      .set({ objects_held: 0 })
      .where('id', '=', jobId)
      .where('objects_held', '=', held)
      .where('objects_pending', '=', held)
      .executeTakeFirst();
    if (rowsChanged(taken) === 0) return false;
    const rows = trx
      .updateTable('job_objects')
      .where('job_id', '=', jobId)
      .where('status', '=', OBJECT_MOVES.release.from[0])
      .where('run_after', '=', NEVER);
    if (reason === undefined) {
      await rows.set({ run_after: 0 }).execute();
      return true;
    }
    const n = rowsChanged(
      await rows.set({ status: OBJECT_MOVES.skipHeld.to[0], error: reason }).executeTakeFirst(),
    );
    await count(trx, jobId, { objects_pending: -n, objects_skipped: n });
    return true;
  });
}
