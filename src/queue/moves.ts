// The shape of a lifecycle's table of moves. Each lifecycle module (transfers.ts, jobs.ts, objects.ts)
// names every move its rows can make, from which states to which, and every write it does reads
// its `from` and `to` from that table, so the table is the whole truth about the lifecycle: no other
// module writes a status. docs/engine.md draws the three tables; test/engine/lifecycle.test.ts checks
// the drawing against them.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { crashReasonAround, LEASE_RAN_OUT } from './backoff.js';
import type { Housekept } from './leased.js';

export interface Move<S extends string> {
  /** The states a row may be in for the move to apply (empty: the move creates the row). */
  readonly from: readonly S[];
  /** The states the move may leave it in. */
  readonly to: readonly S[];
  /** Who makes the move, for the reader (and docs/engine.md). */
  readonly by: string;
}

export type Moves<S extends string> = Readonly<Record<string, Move<S>>>;

/**
 * The moves of a leased row between its claim and its end, for a table whose rows housekeeping takes
 * back (src/queue/leased.ts, whose declaration names the states): `held` while leased, `waiting` to be
 * claimed again, `failed` for good. src/queue/leases.ts writes the last three. A lifecycle's table of
 * moves spreads them among its own.
 */
export function leaseMoves<R extends string, W extends string, F extends string>(leased: Housekept<R, W, F>) {
  const [running] = leased.held;
  const { waiting, failed } = leased.expired;
  return {
    retryLater: { from: [running], to: [waiting], by: 'the lease holder, after a passing failure' },
    fail: {
      from: [running],
      to: [failed],
      by: 'the lease holder, after a lasting failure, the last attempt or the last crash',
    },
    handBack: { from: [running], to: [waiting], by: 'a stopping worker (the attempt is not counted)' },
    reclaim: { from: [running], to: [waiting], by: 'any worker, when the lease ran out' },
    giveUp: {
      from: [running],
      to: [failed],
      by: 'any worker, when the lease ran out on the last crash allowed',
    },
  } as const satisfies Moves<R | W | F>;
}

/** The database, or a transaction on it: lifecycle writes take either. */
export type Queryable = Kysely<Database>;

/** Who holds a claimed row, and until when. */
export interface Lease {
  owner: string;
  now: number;
  /** When the lease ends unless renewed. */
  until: number;
}

/** run_after of work that must never be claimed again (the objects of a canceled job). */
export const NEVER = Number.MAX_SAFE_INTEGER;

/** Rows changed by an UPDATE or DELETE, as a number (Kysely gives a bigint). */
export function rowsChanged(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint }): number {
  return Number(result.numUpdatedRows ?? result.numDeletedRows ?? 0n);
}

/** The error of work given up when its lease ran out (giveUp), with the row's own count of crashes. */
export function crashedError() {
  const [before, after] = crashReasonAround(LEASE_RAN_OUT);
  return sql<string>`${before} || cast(crashes as text)
    || case when crashes = 1 then ${' time'} else ${' times'} end || ${after}`;
}
