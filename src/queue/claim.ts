// The one way a durable queue of ferry claims work: a single UPDATE … RETURNING of the rows a pick
// selects, so a claim is atomic on both databases. PostgreSQL skips rows another process is claiming at
// the same moment (FOR UPDATE SKIP LOCKED); SQLite runs one writer at a time. The pick is a materialized
// CTE: written as `IN (subquery … LIMIT … SKIP LOCKED)`, PostgreSQL may run the subquery more than once
// and claim more rows than the limit.
import { type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { Queryable } from './moves.js';

/** The lock clause that ends a pick: `for update [of alias] skip locked` on PostgreSQL, nothing on SQLite. */
export function skipLocked(dialect: Dialect, of?: string): RawBuilder<unknown> {
  if (dialect !== 'postgres') return sql``;
  return of === undefined ? sql`for update skip locked` : sql`for update of ${sql.id(of)} skip locked`;
}

export interface Claim {
  /** The table whose rows are claimed. */
  table: string;
  /** The columns that name a row; `pick` selects exactly these. */
  keys: readonly string[];
  /** A select of the keys of the rows to claim, with its order, limit and skipLocked(). */
  pick: RawBuilder<unknown>;
  /** The SET list: the lease, the counters, the status the claim moves rows to. */
  set: RawBuilder<unknown>;
  /** A condition the UPDATE adds, so it can use an index the keys alone do not (a job's objects). */
  within?: RawBuilder<unknown>;
}

/** Claims the picked rows and returns them as they are after the claim. */
export async function claimRows<Row>(q: Queryable, claim: Claim): Promise<Row[]> {
  const keys = sql.join(claim.keys.map((k) => sql.ref(k)));
  const matched = claim.keys.length === 1 ? keys : sql`(${keys})`;
  const result = await sql<Row>`
    with picked as materialized (${claim.pick})
    update ${sql.table(claim.table)}
    set ${claim.set}
    where ${claim.within === undefined ? sql`` : sql`${claim.within} and `}${matched} in (select ${keys} from picked)
    returning *`.execute(q);
  return result.rows;
}
