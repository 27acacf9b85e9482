// The batch delete of retention (docs/api.md, "Retention") that the lifecycles whose rows are removed
// whole share: up to `limit` rows in a final state that ended before the cutoff, oldest first, in one
// statement whose outer WHERE checks the state and the time again, so a row that moved since the
// subquery picked it stays. Parameterised by table, like src/queue/leases.ts; each home passes its own
// final states.
import { type RawBuilder, sql } from 'kysely';
import type { Queryable } from './moves.js';

export interface Prunable {
  table: 'transfers' | 'sends';
  /** The states a row ends in: only these are deleted. */
  finished: readonly string[];
  /** The column that holds when the row ended. */
  endedAt: 'finished_at' | 'updated_at';
}

/** Deletes one batch; how many rows went. `also` narrows the rows picked (a condition on the table). */
export async function deleteFinished(
  q: Queryable,
  prunable: Prunable,
  cutoff: number,
  limit: number,
  also: RawBuilder<unknown> = sql`1 = 1`,
): Promise<number> {
  const { table, finished, endedAt } = prunable;
  const ended = sql`status in (${sql.join(finished)}) and ${sql.ref(endedAt)} < ${cutoff}`;
  const result = await sql`delete from ${sql.table(table)} where ${ended} and id in (
      select id from ${sql.table(table)} where ${ended} and ${also} order by ${sql.ref(endedAt)} limit ${limit})`.execute(
    q,
  );
  return Number(result.numAffectedRows ?? 0n);
}
