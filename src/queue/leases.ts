// The lease writes every leased table of the engine shares (graphile-worker's rules): the holder renews
// its leases; rows whose lease ran out are reclaimed, or given up on the last crash allowed; a stopping
// worker hands its rows back without counting the interrupted attempt. Each is one UPDATE, parameterised
// by the table and by the move of the table's lifecycle (src/engine/lifecycle/, and the give-up of
// src/domain/sends/lifecycle.ts), so that lifecycle's table of moves stays the only source of the
// states read and written.
import { type RawBuilder, sql } from 'kysely';
import type { CrashPolicy } from './backoff.js';
import { crashedError, type Move, type Queryable } from './moves.js';

export interface Leased {
  /** The table whose rows are leased. */
  table: 'transfers' | 'job_objects' | 'jobs' | 'sends';
  /** The states in which a row holds its lease (a claim's `to`). */
  held: readonly string[];
  /** Columns that take the time of each of these writes (a table's updated_at). */
  touched?: readonly string[];
  /** Columns that take the time of a write that ends the row (giveUp: finished_at). */
  ended?: readonly string[];
}

type Values = Record<string, RawBuilder<unknown> | string | number | null>;

function setList(values: Values): RawBuilder<unknown> {
  return sql.join(Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
}

function at(columns: readonly string[] | undefined, now: number | undefined): Values {
  if (columns === undefined || columns.length === 0) return {};
  if (now === undefined) throw new Error(`the time is needed to write ${columns.join(', ')}`);
  return Object.fromEntries(columns.map((column) => [column, now]));
}

const RELEASED = { lease_owner: null, lease_expires_at: null } as const;

/** The one state a move writes: the lease writes move each row to a single state. */
function single(move: Move<string>): string {
  const [to, ...more] = move.to;
  if (to === undefined || more.length > 0)
    throw new Error(`a lease write moves to one state, not ${move.to.join(', ')}`);
  return to;
}

async function changed(query: RawBuilder<unknown>, q: Queryable): Promise<number> {
  return Number((await query.execute(q)).numAffectedRows ?? 0n);
}

/** Extends the leases of every row this owner holds. */
export async function renewLeases(q: Queryable, leased: Leased, owner: string, until: number): Promise<void> {
  await sql`update ${sql.table(leased.table)} set lease_expires_at = ${until}
    where lease_owner = ${owner} and status in (${sql.join(leased.held)})`.execute(q);
}

/** reclaim: rows whose lease ran out before the last crash allowed take the move's state again. How many. */
export async function reclaimExpired(
  q: Queryable,
  leased: Leased,
  reclaim: Move<string>,
  now: number,
  policy: CrashPolicy,
): Promise<number> {
  const set = setList({ status: single(reclaim), ...RELEASED, ...at(leased.touched, now) });
  return changed(
    sql`update ${sql.table(leased.table)} set ${set}
      where status in (${sql.join(reclaim.from)}) and lease_expires_at < ${now} and crashes < ${policy.max}`,
    q,
  );
}

/**
 * giveUp: rows whose lease ran out on the last crash allowed take the move's state, with the error
 * that says so (crashedError), rather than being reclaimed; returns them as they are now.
 */
export async function giveUpExpired<Row>(
  q: Queryable,
  leased: Leased,
  giveUp: Move<string>,
  now: number,
  policy: CrashPolicy,
): Promise<Row[]> {
  const set = setList({
    status: single(giveUp),
    error: crashedError(),
    ...RELEASED,
    ...at(leased.touched, now),
    ...at(leased.ended, now),
  });
  const result = await sql<Row>`update ${sql.table(leased.table)} set ${set}
    where status in (${sql.join(giveUp.from)}) and lease_expires_at < ${now} and crashes >= ${policy.max}
    returning *`.execute(q);
  return result.rows;
}

/** handBack: a stopping worker returns the rows it holds, its interrupted attempt and crash uncounted. */
export async function handBackLeases(
  q: Queryable,
  leased: Leased,
  handBack: Move<string>,
  owner: string,
  /** The time, for the table's touched columns (a table without any needs none). */
  now?: number,
): Promise<void> {
  const set = setList({
    status: single(handBack),
    ...RELEASED,
    attempts: sql`attempts - 1`,
    crashes: sql`crashes - 1`,
    ...at(leased.touched, now),
  });
  await sql`update ${sql.table(leased.table)} set ${set}
    where lease_owner = ${owner} and status in (${sql.join(handBack.from)})`.execute(q);
}

/**
 * Every lease a process takes, by table: the columns that name its holder and when it ends. The engine's
 * work, sends, webhook messages, schedules and periodic tasks, and a location's token refresh.
 */
const LEASE_COLUMNS = [
  { table: 'job_objects', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'transfers', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'jobs', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'sends', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'webhook_messages', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'schedules', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'periodic_tasks', owner: 'lease_owner', expires: 'lease_expires_at' },
  { table: 'locations', owner: 'refresh_lease_owner', expires: 'refresh_lease_expires_at' },
] as const;

/**
 * endLeasesOf: the leases of `owners`, holders known to have exited (src/queue/predecessor.ts: a
 * process's predecessor in its data dir slot, and no one else), end now rather than when they run out.
 * Only their end time is written, to the epoch so that it has passed on every process's clock: each
 * table's own reclaim, give-up or claim then takes the rows back at its next look, as it does a lease
 * that ran out, counting the crash (src/engine/lifecycle/ and the others own those moves). How many.
 */
export async function endLeasesOf(q: Queryable, owners: readonly string[]): Promise<number> {
  if (owners.length === 0) return 0;
  let ended = 0;
  for (const { table, owner, expires } of LEASE_COLUMNS) {
    ended += await changed(
      sql`update ${sql.table(table)} set ${sql.ref(expires)} = 0
        where ${sql.ref(owner)} in (${sql.join(owners)}) and ${sql.ref(expires)} > 0`,
      q,
    );
  }
  return ended;
}
