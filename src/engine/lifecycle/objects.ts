// The lifecycle of a bulk job's objects: every status a job_objects row takes, and every write of one.
// A row is created pending by the planner, claimed (running, with a lease), and settles as succeeded,
// skipped or failed, or goes back to pending to be tried again. Every write by a worker checks it
// still holds the lease (graphile-worker's rule), so a worker that lost its lease cannot overwrite
// whoever took the object over. Each claim counts a crash in `crashes`, which the claim's settlement
// or hand-back takes back, so an object on which processes keep dying or freezing is failed once its
// lease runs out on the last crash allowed (FERRY_WORK_MAX_CRASHES).

import { createHash } from 'node:crypto';
import { sql, type UpdateObject } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, JobObjectRow } from '../../db/schema.js';
import { objectSourceHashes, objectTouched } from '../../durable/work.js';
import type { CrashPolicy } from '../../queue/backoff.js';
import { skipLocked } from '../../queue/claim.js';
import { JOB_OBJECTS } from '../../queue/leased.js';
import { claimLeased, unleased } from '../../queue/leases.js';
import { type Lease, leaseMoves, type Moves, NEVER, type Queryable, rowsChanged } from '../../queue/moves.js';
import type { ObjectStatus, Verdict } from '../../states.js';
import type { HashKind } from '../../stores/contract.js';
import { afterCrash, provenAs, type Settlement } from '../outcome.js';

/** What identifies a job object's key in the index (key_hash): its SHA-1, as hex. */
export function keyHash(key: string): string {
  return createHash('sha1').update(key, 'utf8').digest('hex');
}

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

/** The job counter of each verdict. */
const VERDICT_COUNTERS: Record<Verdict, Counter> = {
  equal: 'objects_equal',
  differ: 'objects_differ',
  missing_in_destination: 'objects_missing_in_destination',
  missing_in_source: 'objects_missing_in_source',
};

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

type Counter =
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

/** Moves the job's counters by the given amounts: called in the transaction of the move it counts. */
async function count(q: Queryable, jobId: string, by: Partial<Record<Counter, number>>): Promise<void> {
  const moves = Object.entries(by).filter(([, n]) => n !== 0) as Array<[Counter, number]>;
  if (moves.length === 0) return;
  await q
    .updateTable('jobs')
    .set((eb) => Object.fromEntries(moves.map(([column, n]) => [column, eb(column, '+', n)])))
    .where('id', '=', jobId)
    .execute();
}

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

function held(q: Queryable, owner: string, object: Pick<JobObjectRow, 'job_id' | 'seq'>) {
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

export interface ObjectSettlement {
  object: Pick<JobObjectRow, 'job_id' | 'seq'>;
  settlement: Settlement;
}

/**
 * succeed, retryLater or fail each object as its settlement says, in one transaction with the jobs'
 * counters (one counter update per job). An object whose lease was lost is not written nor counted:
 * false at its place in the answer. One transaction for many objects is one commit: on PostgreSQL
 * that, more than the statements, is what a settled object costs.
 */
export async function settleMany(q: Queryable, owner: string, items: ObjectSettlement[]): Promise<boolean[]> {
  if (items.length === 0) return [];
  const released = unleased(JOB_OBJECTS);
  return q.transaction().execute(async (trx) => {
    const written: boolean[] = items.map(() => false);
    const deltas = new Map<string, Partial<Record<Counter, number>>>();
    const add = (jobId: string, counter: Counter, n: number) => {
      const d = deltas.get(jobId) ?? {};
      d[counter] = (d[counter] ?? 0) + n;
      deltas.set(jobId, d);
    };
    // Objects done (the common case) are written with one UPDATE per job for the batch; retries and
    // failures, which carry their own error text, one each.
    const done = new Map<string, number[]>(); // job -> indexes into items
    for (const [i, { object, settlement }] of items.entries()) {
      if (settlement.kind === 'done') {
        done.set(object.job_id, [...(done.get(object.job_id) ?? []), i]);
        continue;
      }
      const set: UpdateObject<Database, 'job_objects'> =
        settlement.kind === 'again'
          ? {
              status: OBJECT_MOVES.retryLater.to[0],
              error: settlement.error,
              run_after: settlement.runAfter,
              // The attempt ended without crashing: its claim's crash is taken back.
              ...(settlement.crashed ? {} : { crashes: sql<number>`crashes - 1` }),
              ...released,
            }
          : { status: OBJECT_MOVES.fail.to[0], error: settlement.error, ...released };
      const ok = rowsChanged(await held(trx, owner, object).set(set).executeTakeFirst()) > 0;
      written[i] = ok;
      if (!ok || settlement.kind === 'again') continue; // still pending as the counters go
      add(object.job_id, 'objects_pending', -1);
      add(object.job_id, 'objects_failed', 1);
    }
    for (const [jobId, indexes] of done) {
      const bySeq = new Map<
        number,
        {
          index: number;
          bytes: number;
          /** The object's size, when it is not the bytes moved (a verify's: it reads both sides, or none). */
          size: number;
          skipped: boolean;
          deleted: boolean;
          checksums?: { source: string; destination: string };
          /** How its written bytes were proven, as the row keeps it: `size` or the kinds. */
          verified?: string;
          /** What a verify found (docs/api.md, "Verify"). */
          verdict?: Verdict;
          /** JSON of what its work did at its destination (src/engine/backup.ts, Touched). */
          touched?: string;
        }
      >();
      for (const i of indexes) {
        const item = items[i] as ObjectSettlement & { settlement: { kind: 'done' } };
        bySeq.set(item.object.seq, {
          index: i,
          bytes: item.settlement.bytes,
          size: item.settlement.bytesTotal ?? item.settlement.bytes,
          skipped: item.settlement.skipped === true,
          deleted: item.settlement.deleted === true,
          ...(item.settlement.checksums === undefined ? {} : { checksums: item.settlement.checksums }),
          ...(item.settlement.verified === undefined ? {} : { verified: provenAs(item.settlement.verified) }),
          ...(item.settlement.verdict === undefined ? {} : { verdict: item.settlement.verdict }),
          ...(item.settlement.touched === undefined
            ? {}
            : { touched: objectTouched.encode(item.settlement.touched) }),
        });
      }
      const seqs = [...bySeq.keys()];
      // Per row: its status (succeeded or skipped) and its size, chosen by seq. The cast gives
      // PostgreSQL the sizes' type, which a CASE of bare parameters would leave as text.
      const bigints = (of: (row: { bytes: number; size: number } | undefined) => number) =>
        sql<number>`case ${sql.join(
          seqs.map((seq) => sql`when seq = ${seq} then cast(${of(bySeq.get(seq)) ?? 0} as bigint)`),
          sql` `,
        )} end`;
      const sizes = bigints((row) => row?.bytes ?? 0);
      const objectSizes = seqs.some((seq) => bySeq.get(seq)?.size !== bySeq.get(seq)?.bytes)
        ? bigints((row) => row?.size ?? 0)
        : sizes;
      const skipped = seqs.filter((seq) => bySeq.get(seq)?.skipped === true);
      // The checksums the copies compared (docs/api.md, "Reports"), chosen by seq as the sizes are;
      // null for the objects that compared none (and for a batch where none did, without a CASE).
      const hashed = seqs.filter((seq) => bySeq.get(seq)?.checksums !== undefined);
      const hash = (side: 'source' | 'destination') =>
        hashed.length === 0
          ? null
          : sql<string | null>`case ${sql.join(
              hashed.map(
                (seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.checksums?.[side]} as text)`,
              ),
              sql` `,
            )} else null end`;
      // How each written object was proven (docs/api.md, "Verification"), chosen by seq the same way.
      const proven = seqs.filter((seq) => bySeq.get(seq)?.verified !== undefined);
      const verified =
        proven.length === 0
          ? null
          : sql<string | null>`case ${sql.join(
              proven.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.verified} as text)`),
              sql` `,
            )} else null end`;
      // What each verify's object found, chosen by seq the same way.
      const judged = seqs.filter((seq) => bySeq.get(seq)?.verdict !== undefined);
      const verdict =
        judged.length === 0
          ? null
          : sql<Verdict | null>`case ${sql.join(
              judged.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.verdict} as text)`),
              sql` `,
            )} else null end`;
      // What each object's work did at its destination, for an undo (docs/api.md, "Undo"); a row
      // without one keeps what it had (a sync's copy planned as a creation that was skipped keeps it,
      // and an undo reads only succeeded objects).
      const recorded = seqs.filter((seq) => bySeq.get(seq)?.touched !== undefined);
      const touched =
        recorded.length === 0
          ? undefined
          : sql<string | null>`case ${sql.join(
              recorded.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.touched} as text)`),
              sql` `,
            )} else touched end`;
      const [succeeded, skip] = OBJECT_MOVES.succeed.to;
      const rows = await trx
        .updateTable('job_objects')
        .set({
          status:
            skipped.length === 0
              ? succeeded
              : sql<ObjectStatus>`case when seq in (${sql.join(skipped)}) then ${skip} else ${succeeded} end`,
          bytes_done: sizes,
          size: objectSizes,
          source_hash: hash('source'),
          destination_hash: hash('destination'),
          verified,
          verdict,
          ...(touched === undefined ? {} : { touched }),
          error: null,
          ...released,
        })
        .where('job_id', '=', jobId)
        .where('seq', 'in', seqs)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .returning('seq')
        .execute();
      for (const { seq } of rows) {
        const row = bySeq.get(seq);
        if (!row) continue;
        written[row.index] = true;
        const settlement = (items[row.index] as ObjectSettlement).settlement;
        if (settlement.kind === 'done' && settlement.reason !== undefined) {
          // Why it was left alone (docs/api.md, "Plans"): shown with the failures.
          await trx
            .updateTable('job_objects')
            .set({ error: settlement.reason })
            .where('job_id', '=', jobId)
            .where('seq', '=', seq)
            .execute();
        }
        add(jobId, 'objects_pending', -1);
        add(
          jobId,
          row.skipped ? 'objects_skipped' : row.deleted ? 'objects_deleted' : 'objects_succeeded',
          1,
        );
        add(jobId, 'bytes_finished', row.bytes);
        if (row.verified === 'size') add(jobId, 'objects_size_only', 1);
        if (row.verdict !== undefined) add(jobId, VERDICT_COUNTERS[row.verdict], 1);
      }
    }
    for (const [jobId, by] of deltas) await count(trx, jobId, by);
    return written;
  });
}

/** One object's settlement (settleMany with one item); false when the lease was lost. */
export async function settle(
  q: Queryable,
  owner: string,
  object: Pick<JobObjectRow, 'job_id' | 'seq'>,
  settlement: Settlement,
): Promise<boolean> {
  const [written] = await settleMany(q, owner, [{ object, settlement }]);
  return written === true;
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
