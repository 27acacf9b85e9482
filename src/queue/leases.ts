// The one routine by which every leased table (src/queue/leased.ts) takes, renews, takes back, hands back
// and frees its leases (graphile-worker's rules): a claim takes the lease with the attempt it counts; the
// holder renews it; rows whose lease ran out are taken back as their declaration says (by housekeeping,
// or by the next claim), or given up on the last crash allowed; a stopping holder hands its rows back
// without counting the interrupted attempt; the holder's last write frees it. Each is one statement,
// parameterised by the table's declaration alone, so that no other file writes a lease column
// (test/layering/layering.test.ts) and a table's lease rules are read in one place.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { CrashPolicy } from './backoff.js';
import { claimRows } from './claim.js';
import { LEASED, type LeasedTable } from './leased.js';
import { crashedError, type Lease, type Queryable } from './moves.js';

type Values = Record<string, RawBuilder<unknown> | string | number | null>;

function setList(values: Values): RawBuilder<unknown> {
  return sql.join(Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
}

function at(columns: readonly string[] | undefined, now: number | undefined): Values {
  if (columns === undefined || columns.length === 0) return {};
  if (now === undefined) throw new Error(`the time is needed to write ${columns.join(', ')}`);
  return Object.fromEntries(columns.map((column) => [column, now]));
}

/** A column counted down by one. */
function less(column: string): RawBuilder<unknown> {
  return sql`${sql.ref(column)} - 1`;
}

async function changed(query: RawBuilder<unknown>, q: Queryable): Promise<number> {
  return Number((await query.execute(q)).numAffectedRows ?? 0n);
}

/** The lease columns of a table, freed: for the insert of a new row and a holder's last write. */
export type Unleased<T extends LeasedTable> = { [K in T['owner'] | T['until']]: null };

/** The lease columns freed, to spread into a row's insert or into the holder's write that ends its hold. */
export function unleased<const T extends LeasedTable>(leased: T): Unleased<T> {
  return { [leased.owner]: null, [leased.until]: null } as Unleased<T>;
}

/**
 * No holder, and a lease end at `until`: nobody takes the row before then (a table whose declaration
 * allows it, heldOff: a job's planning after a passing failure). To spread into the holder's last write.
 */
export function heldOff<const T extends LeasedTable & { heldOff: true }>(
  leased: T,
  until: number,
): { [K in T['owner']]: null } & { [K in T['until']]: number } {
  return { [leased.owner]: null, [leased.until]: until } as { [K in T['owner']]: null } & {
    [K in T['until']]: number;
  };
}

const column = (alias: string | undefined, name: string) =>
  alias === undefined ? sql.ref(name) : sql.ref(`${alias}.${name}`);

/**
 * True (as SQL) for a row no live lease holds: never leased, freed, or run out at `now` (for a table
 * with heldOff, whatever its holder column says). `alias`: the table's name in the pick.
 */
export function leaseFree(leased: LeasedTable, now: number, alias?: string): RawBuilder<SqlBool> {
  const until = column(alias, leased.until);
  const free = leased.heldOff ? sql`${until} is null` : sql`${column(alias, leased.owner)} is null`;
  return sql<SqlBool>`(${free} or ${until} < ${now})`;
}

/**
 * Claims the picked rows of a leased table for `lease` (src/queue/claim.ts, claimRows): the lease, the
 * attempt and the crash its declaration counts, and the lifecycle's own `set` (its status, its times).
 */
export function claimLeased<Row>(
  q: Queryable,
  leased: LeasedTable,
  lease: Lease,
  claim: {
    pick: RawBuilder<unknown>;
    set?: RawBuilder<unknown>;
    /** With `within`, the keys that name a row inside it (a job's objects: seq, within the job). */
    keys?: readonly string[];
    within?: RawBuilder<unknown>;
  },
): Promise<Row[]> {
  const owner = sql.ref(leased.owner);
  const counted: Values = {
    [leased.owner]: lease.owner,
    [leased.until]: lease.until,
    ...(leased.attempts === undefined ? {} : { [leased.attempts]: sql`${sql.ref(leased.attempts)} + 1` }),
    ...(leased.crashes === 'each claim' ? { crashes: sql`crashes + 1` } : {}),
    ...(leased.crashes === 'lease ran out'
      ? { crashes: sql`crashes + case when ${owner} is null then 0 else 1 end` }
      : {}),
  };
  return claimRows<Row>(q, {
    table: leased.table,
    keys: claim.keys ?? leased.keys,
    pick: claim.pick,
    set: claim.set === undefined ? setList(counted) : sql`${claim.set}, ${setList(counted)}`,
    ...(claim.within === undefined ? {} : { within: claim.within }),
  });
}

/** One row of a leased table, by its keys. */
export type RowKey = Readonly<Record<string, string | number>>;

/** The conditions of a write by the holder: its lease, a held state, and one row when `row` is given. */
function heldBy(leased: LeasedTable, owner: string, row?: RowKey): RawBuilder<unknown> {
  const conditions = [sql`${sql.ref(leased.owner)} = ${owner}`];
  if (leased.held !== undefined) conditions.push(sql`status in (${sql.join(leased.held)})`);
  if (row !== undefined) {
    for (const key of leased.keys) {
      const value = row[key];
      if (value === undefined)
        throw new Error(`${leased.table}: a row is named by ${leased.keys.join(', ')}`);
      conditions.push(sql`${sql.ref(key)} = ${value}`);
    }
  }
  return sql.join(conditions, sql` and `);
}

/** Extends the leases this owner holds (of one row when `row` is given). How many. */
export async function renewLeases(
  q: Queryable,
  leased: LeasedTable,
  owner: string,
  until: number,
  row?: RowKey,
): Promise<number> {
  return changed(
    sql`update ${sql.table(leased.table)} set ${sql.ref(leased.until)} = ${until}
      where ${heldBy(leased, owner, row)}`,
    q,
  );
}

/**
 * Frees the lease this owner holds on one row, nothing else written (nothing was due, or the work could
 * not run). How many: 0 when the lease was lost.
 */
export async function releaseLease(
  q: Queryable,
  leased: LeasedTable,
  owner: string,
  row: RowKey,
): Promise<number> {
  return changed(
    sql`update ${sql.table(leased.table)} set ${setList(unleased(leased))}
      where ${heldBy(leased, owner, row)}`,
    q,
  );
}

function housekept(leased: LeasedTable): { waiting: string; failed: string } {
  if (leased.expired.by !== 'housekeeping' || leased.held === undefined)
    throw new Error(`${leased.table}: rows whose lease ran out are taken back by its claim`);
  return leased.expired;
}

function failedState(leased: LeasedTable): string {
  const failed = leased.expired.failed;
  if (failed === undefined || leased.held === undefined)
    throw new Error(`${leased.table}: nothing is given up when its lease runs out`);
  return failed;
}

/**
 * reclaim: rows whose lease ran out before the last crash allowed take their waiting state again (a
 * table whose rows housekeeping takes back). How many.
 */
export async function reclaimExpired(
  q: Queryable,
  leased: LeasedTable,
  now: number,
  policy: CrashPolicy,
): Promise<number> {
  const { waiting } = housekept(leased);
  const set = setList({ status: waiting, ...unleased(leased), ...at(leased.touched, now) });
  return changed(
    sql`update ${sql.table(leased.table)} set ${set}
      where status in (${sql.join(leased.held ?? [])}) and ${sql.ref(leased.until)} < ${now}
        and crashes < ${policy.max}`,
    q,
  );
}

/**
 * giveUp: rows whose lease ran out on the last crash allowed take the table's failed state, with the
 * error that says so (crashedError), rather than being taken back; returns them as they are now.
 */
export async function giveUpExpired<Row>(
  q: Queryable,
  leased: LeasedTable,
  now: number,
  policy: CrashPolicy,
): Promise<Row[]> {
  const failed = failedState(leased);
  const set = setList({
    status: failed,
    error: crashedError(),
    ...unleased(leased),
    ...at(leased.touched, now),
    ...at(leased.ended, now),
  });
  const result = await sql<Row>`update ${sql.table(leased.table)} set ${set}
    where status in (${sql.join(leased.held ?? [])}) and ${sql.ref(leased.until)} < ${now}
      and crashes >= ${policy.max}
    returning *`.execute(q);
  return result.rows;
}

/**
 * handBack: a stopping holder returns the rows it holds (one when `row` is given), its interrupted
 * attempt (and the crash its claim counted) uncounted; a row housekeeping takes back takes its waiting
 * state again. `now` for the table's touched columns (a table without any needs none).
 */
export async function handBackLeases(
  q: Queryable,
  leased: LeasedTable,
  owner: string,
  now?: number,
  row?: RowKey,
): Promise<void> {
  const set = setList({
    ...(leased.expired.by === 'housekeeping' ? { status: leased.expired.waiting } : {}),
    ...unleased(leased),
    ...(leased.attempts === undefined ? {} : { [leased.attempts]: less(leased.attempts) }),
    ...(leased.crashes === 'each claim' ? { crashes: less('crashes') } : {}),
    ...at(leased.touched, now),
  });
  await sql`update ${sql.table(leased.table)} set ${set} where ${heldBy(leased, owner, row)}`.execute(q);
}

/**
 * A leased table as a process keeps it (renewed at its heartbeat, taken back by its housekeeping,
 * handed back at its stop), with what the table's lifecycle does with the rows given up: `givenUp`
 * in the transaction that fails them (count them, report them), `afterGivenUp` after it.
 */
export interface Kept<Row = unknown> {
  readonly leased: LeasedTable;
  givenUp?(trx: Queryable, rows: Row[], now: number): Promise<void>;
  afterGivenUp?(q: Queryable, rows: Row[], now: number): Promise<void>;
}

/** Renews every lease `owner` holds in the kept tables. */
export async function renewAll(q: Queryable, kept: readonly Kept[], owner: string, until: number) {
  for (const { leased } of kept) await renewLeases(q, leased, owner, until);
}

/**
 * Housekeeping: of the kept tables whose rows it takes back, first every row whose lease ran out on
 * the last crash allowed is given up (failed, not taken back: docs/api.md, "Background work that keeps
 * failing"), then the others are reclaimed. How many of each.
 */
export async function takeBack(
  q: Queryable,
  kept: readonly Kept[],
  now: number,
  policy: CrashPolicy,
): Promise<{ failed: number; reclaimed: number }> {
  const housekeeping = kept.filter(({ leased }) => leased.expired.by === 'housekeeping');
  let failed = 0;
  for (const table of housekeeping) failed += (await giveUp(q, table, now, policy)).length;
  let reclaimed = 0;
  for (const { leased } of housekeeping) reclaimed += await reclaimExpired(q, leased, now, policy);
  return { failed, reclaimed };
}

/** giveUpExpired with what the table's lifecycle does with the rows given up. */
export async function giveUp<Row>(
  q: Queryable,
  kept: Kept<Row>,
  now: number,
  policy: CrashPolicy,
): Promise<Row[]> {
  const rows = await q.transaction().execute(async (trx) => {
    const given = await giveUpExpired<Row>(trx, kept.leased, now, policy);
    if (given.length > 0) await kept.givenUp?.(trx, given, now);
    return given;
  });
  if (rows.length > 0) await kept.afterGivenUp?.(q, rows, now);
  return rows;
}

/** A stopping process hands back what it holds in every kept table. */
export async function handBackAll(q: Queryable, kept: readonly Kept[], owner: string, now: number) {
  for (const { leased } of kept) await handBackLeases(q, leased, owner, now);
}

/**
 * endLeasesOf: the leases of `owners`, holders known to have exited (src/queue/predecessor.ts: a
 * process's predecessor in its data dir slot, and no one else), end now rather than when they run out.
 * Only their end time is written, to the epoch so that it has passed on every process's clock: each
 * table's own take-back (its housekeeping, or its next claim) then takes the rows back as it does a
 * lease that ran out, counting the crash. Every leased table (leased.ts). How many.
 */
export async function endLeasesOf(q: Queryable, owners: readonly string[]): Promise<number> {
  if (owners.length === 0) return 0;
  let ended = 0;
  for (const { table, owner, until } of LEASED) {
    ended += await changed(
      sql`update ${sql.table(table)} set ${sql.ref(until)} = 0
        where ${sql.ref(owner)} in (${sql.join(owners)}) and ${sql.ref(until)} > 0`,
      q,
    );
  }
  return ended;
}
