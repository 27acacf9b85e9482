// A job row's counters of its objects (docs/engine.md, "Counters"): moved by the object lifecycle in the
// transaction of the move they count, and only when the move itself was written.

import type { Queryable } from '../queue/moves.js';
import type { Verdict } from '../states.js';

export type Counter =
  | 'objects_total'
  | 'objects_pending'
  | 'objects_succeeded'
  | 'objects_skipped'
  | 'objects_failed'
  | 'objects_deleted'
  | 'objects_held'
  | 'objects_size_only'
  | 'objects_equal'
  | 'objects_differ'
  | 'objects_missing_in_destination'
  | 'objects_missing_in_source'
  | 'bytes_finished';

/** The job counter of each verdict. */
export const VERDICT_COUNTERS: Record<Verdict, Counter> = {
  equal: 'objects_equal',
  differ: 'objects_differ',
  missing_in_destination: 'objects_missing_in_destination',
  missing_in_source: 'objects_missing_in_source',
};

/** Moves the job's counters by the given amounts: called in the transaction of the move it counts. */
export async function count(
  q: Queryable,
  jobId: string,
  by: Partial<Record<Counter, number>>,
): Promise<void> {
  const moves = Object.entries(by).filter(([, n]) => n !== 0) as Array<[Counter, number]>;
  if (moves.length === 0) return;
  await q
    .updateTable('jobs')
    .set((eb) => Object.fromEntries(moves.map(([column, n]) => [column, eb(column, '+', n)])))
    .where('id', '=', jobId)
    .execute();
}
